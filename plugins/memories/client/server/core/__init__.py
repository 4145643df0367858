"""Shared vocabulary of every layer: value types, errors, settings, input checks."""
