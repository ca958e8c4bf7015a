// Escaping for text that comes from scenario files, target labels or pull requests before it
// goes into Markdown or HTML: no table breaks, no raw HTML, no links, no @-mentions.

const MD_SPECIAL = /[\\`*_{}[\]()#+!|<>~&]/g;

/** Inline Markdown text: special characters escaped, newlines folded, mentions defused. */
export function md(text: string | number | undefined | null): string {
  return String(text ?? '')
    .replace(/\r?\n/g, ' ')
    .replace(MD_SPECIAL, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`))
    .replace(/@(?=\w)/g, '@\u200b');
}

/** Text for inside an HTML comment (our hidden marker): no `--` and no `>`. */
export function commentSafe(text: string): string {
  return text.replace(/-{2,}/g, '-').replace(/[<>]/g, '');
}

export function html(text: string | number | undefined | null): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
