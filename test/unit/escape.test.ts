// Text from scenario files and PRs cannot inject Markdown, HTML, links or mentions.
import { describe, expect, it } from 'vitest';
import { md, html, commentSafe } from '../../src/report/escape';
import { marker } from '../../src/report/markdown';

describe('escaping', () => {
  it('neutralises tables, HTML, links, images and mentions in Markdown', () => {
    const evil = 'x | y <img src=x onerror=alert(1)> [click](http://evil) ![i](http://e) @octocat *b* `c`\nnext';
    const out = md(evil);
    expect(out).not.toMatch(/(^|[^\\])\|/);
    expect(out).not.toContain('<img');
    expect(out).not.toMatch(/(^|[^\\])\[click\]/);
    expect(out).not.toContain('@octocat');
    expect(out).not.toContain('\n');
    expect(out).toContain('&lt;img');
  });
  it('escapes HTML and keeps the comment marker closed', () => {
    expect(html(`"><script>`)).toBe('&quot;&gt;&lt;script&gt;');
    expect(commentSafe('a --> b <!-- c')).not.toMatch(/--|[<>]/);
    expect(marker('gate --> <b>')).toMatch(/^<!-- rabbitmq-perf-gate:[^<>]* -->$/);
  });
});
