import type { AnchorHTMLAttributes, MouseEvent } from "react";
import { isModifiedClick, navigate } from "../lib/router";

export type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & {
  href: string;
  replace?: boolean;
};

/** An <a> that navigates inside the app, and still opens a new tab on a modified click. */
export function Link({ href, replace, onClick, ...rest }: LinkProps) {
  function handleClick(event: MouseEvent<HTMLAnchorElement>) {
    onClick?.(event);
    if (isModifiedClick(event) || rest.target === "_blank") return;
    event.preventDefault();
    navigate(href, { replace });
  }
  return <a href={href} onClick={handleClick} {...rest} />;
}
