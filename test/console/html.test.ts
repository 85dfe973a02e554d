import { describe, expect, it } from 'vitest';
import { escapeHtml, fold, FOLDED_MAX, html, jsonBlock } from '../../src/console/html.js';
import { lineDiff } from '../../src/console/line-diff.js';

describe('console HTML escaping', () => {
  it('escapes markup in text and attribute context', () => {
    const hostile = `<script>alert(1)</script>"' onmouseover=x & <img src=x onerror=alert(1)>`;
    const out = html`<a title="${hostile}">${hostile}</a>`.value;
    expect(out).not.toMatch(/<script|<img|" onmouseover/);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39; onmouseover=x &amp; &lt;img');
  });

  it('shows bidi overrides, zero-width and control characters as code points instead of applying them', () => {
    const out = escapeHtml('invoice\u202Efdp.exe\u200B\u0007\u001b[31m\u2066x\u2069\u2028');
    expect(out).toBe('invoice⟨U+202E⟩fdp.exe⟨U+200B⟩⟨U+0007⟩⟨U+001B⟩[31m⟨U+2066⟩x⟨U+2069⟩⟨U+2028⟩');
    expect(escapeHtml('line\nnext\ttab')).toBe('line\nnext\ttab');
  });

  it('keeps nested templates as markup but escapes strings in arrays', () => {
    const out = html`<ul>${['<b>', html`<li>ok</li>`]}</ul>`.value;
    expect(out).toBe('<ul>&lt;b&gt;<li>ok</li></ul>');
  });

  it('folds long values: a megabyte string becomes a short summary and a capped, escaped body', () => {
    const big = `<script>x</script>${'A'.repeat(1_000_000)}`;
    const out = fold(big).value;
    expect(out.length).toBeLessThan(FOLDED_MAX + 2000);
    expect(out).toContain('<details class="fold">');
    expect(out).toContain('1,000,018 characters');
    expect(out).toContain('more characters not shown');
    expect(out).not.toContain('<script>');
    expect(fold('short').value).toBe('<span class="value">short</span>');
    expect(jsonBlock({ a: '<b>' }).value).toContain('&lt;b&gt;');
  });
});

describe('input diff', () => {
  it('marks removed and added lines, keeping the common head and tail', () => {
    const diff = lineDiff('{\n  "command": "rm -rf /",\n  "x": 1\n}', '{\n  "command": "rm -rf ./tmp",\n  "x": 1\n}');
    expect(diff).toEqual([
      { op: 'same', text: '{' },
      { op: 'del', text: '  "command": "rm -rf /",' },
      { op: 'add', text: '  "command": "rm -rf ./tmp",' },
      { op: 'same', text: '  "x": 1' },
      { op: 'same', text: '}' },
    ]);
  });

  it('declines texts too long to diff on a request', () => {
    const many = Array.from({ length: 5000 }, (_, k) => String(k)).join('\n');
    expect(lineDiff(many, `x\n${many.replace(/7/g, '8')}`)).toBeNull();
  });
});
