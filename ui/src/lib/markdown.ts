// Memory content as Markdown, for the reader. Content is untrusted: raw HTML is never passed
// through (markdown-it escapes it with html: false), links keep markdown-it's default check
// that refuses javascript:, vbscript:, file: and data: URLs, images are not loaded (a memory
// should not make the browser fetch anything), and every link gets rel="noopener noreferrer".

import MarkdownIt from "markdown-it";

const markdown = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: true });
markdown.disable("image");

const renderToken = markdown.renderer.renderToken.bind(markdown.renderer);
markdown.renderer.rules.link_open = (tokens, index, options) => {
  const token = tokens[index]!;
  token.attrSet("rel", "noopener noreferrer");
  token.attrSet("target", "_blank");
  return renderToken(tokens, index, options);
};

/** HTML for `source` in which every tag comes from the Markdown syntax, none from the text. */
export function renderMarkdown(source: string): string {
  return markdown.render(source);
}
