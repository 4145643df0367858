"""`python -m server.cli`: the same as the `claude-memory` command."""

import sys

from server.cli.main import main

sys.exit(main())
