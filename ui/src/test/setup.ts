import { afterEach } from "vitest";
import { cleanup } from "./render";

// Tell React this is a test environment, so act() works without warnings.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(async () => {
  await cleanup();
  sessionStorage.clear();
  window.history.replaceState(null, "", "/ui/");
});
