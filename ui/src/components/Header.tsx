import { formatCount } from "../lib/format";
import { searchShortcutLabel } from "../lib/shortcuts";
import { routePath, type RouteName } from "../lib/router";
import type { HealthState } from "../lib/useHealth";
import { HealthBadge } from "./HealthBadge";
import { Link } from "./Link";

const NAV: { name: RouteName; label: string; href: string; hint?: string }[] = [
  { name: "timeline", label: "Timeline", href: routePath({ name: "timeline" }) },
  {
    name: "search",
    label: "Search",
    href: routePath({ name: "search" }),
    hint: searchShortcutLabel(),
  },
  { name: "preferences", label: "Preferences", href: routePath({ name: "preferences" }) },
  { name: "lessons", label: "Lessons", href: routePath({ name: "lessons" }) },
  { name: "sessions", label: "Sessions", href: routePath({ name: "sessions" }) },
  { name: "context", label: "Context", href: routePath({ name: "context" }) },
  { name: "drifted", label: "Drifted", href: routePath({ name: "drifted" }) },
  { name: "instructions", label: "Instructions", href: routePath({ name: "instructions" }) },
  { name: "settings", label: "Settings", href: routePath({ name: "settings" }) },
];

export type HeaderProps = {
  current: RouteName;
  health: HealthState;
  memoryCount: number | undefined;
};

export function Header({ current, health, memoryCount }: HeaderProps) {
  return (
    <header className="app-header">
      <Link href={routePath({ name: "timeline" })} className="brand">
        <svg viewBox="0 0 32 32" width="22" height="22" aria-hidden="true">
          <rect width="32" height="32" rx="7" className="brand-mark" />
          <path
            d="M4 20c5-8 9 4 14-3s8-6 10-4"
            fill="none"
            stroke="#fff"
            strokeWidth="3"
            strokeLinecap="round"
          />
        </svg>
        <span>claude-memory</span>
      </Link>
      <nav aria-label="Main">
        <ul className="nav-list">
          {NAV.map((item) => (
            <li key={item.name}>
              <Link
                href={item.href}
                className="nav-link"
                aria-current={item.name === current ? "page" : undefined}
              >
                {item.label}
                {item.hint && (
                  <kbd className="nav-hint" aria-hidden="true">
                    {item.hint}
                  </kbd>
                )}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="header-status">
        <span className="memory-count">
          {memoryCount === undefined ? "–" : formatCount(memoryCount)}{" "}
          {memoryCount === 1 ? "memory" : "memories"}
        </span>
        <HealthBadge state={health} />
      </div>
    </header>
  );
}
