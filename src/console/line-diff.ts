/** One line of a diff: kept, removed from the first text, or added in the second. */
export interface DiffLine {
  op: 'same' | 'del' | 'add';
  text: string;
}

/** Beyond this many lines on both sides together the diff is not computed (the page shows both inputs instead). */
export const MAX_DIFF_LINES = 4000;

/**
 * A line diff of two texts (longest common subsequence, after trimming the common head and
 * tail, which is all a typical rewrite of a tool input leaves). Returns null when the texts
 * are too long to diff on a page request.
 */
export function lineDiff(before: string, after: string): DiffLine[] | null {
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  if (x.length + y.length > MAX_DIFF_LINES) return null;
  // lcs[i][j]: common subsequence length of x[i..] and y[j..].
  const width = y.length + 1;
  const lcs = new Uint32Array((x.length + 1) * width);
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i * width + j] = x[i] === y[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: 'same', text }));
  let i = 0;
  let j = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      out.push({ op: 'same', text: x[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) out.push({ op: 'del', text: x[i++]! });
    else out.push({ op: 'add', text: y[j++]! });
  }
  while (i < x.length) out.push({ op: 'del', text: x[i++]! });
  while (j < y.length) out.push({ op: 'add', text: y[j++]! });
  for (const text of a.slice(a.length - tail)) out.push({ op: 'same', text });
  return out;
}
