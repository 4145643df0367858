// The one global shortcut: Cmd+K (macOS) or Ctrl+K (elsewhere) focuses the search box.

export const SEARCH_BOX_ID = "search-box";

export function isSearchShortcut(event: {
  key: string;
  metaKey: boolean;
  ctrlKey: boolean;
  altKey: boolean;
  shiftKey: boolean;
}): boolean {
  return (
    event.key.toLowerCase() === "k" &&
    (event.metaKey || event.ctrlKey) &&
    !event.altKey &&
    !event.shiftKey
  );
}

export function isMac(platform: string = navigator.platform ?? ""): boolean {
  return /mac|iphone|ipad/i.test(platform);
}

export function searchShortcutLabel(): string {
  return isMac() ? "⌘K" : "Ctrl K";
}

/** Focus and select the search box if it is on the page; false if it is not. */
export function focusSearchBox(): boolean {
  const box = document.getElementById(SEARCH_BOX_ID);
  if (!(box instanceof HTMLInputElement)) return false;
  box.focus();
  box.select();
  return true;
}
