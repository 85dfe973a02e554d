/**
 * SQL written once for both engines: SQLite's `?` placeholders as PostgreSQL's `$1, $2, …`, in
 * order. Only for statements whose text holds no `?` other than placeholders (no string literal
 * or JSON operator with one), which is every statement the engines share.
 */
export function numbered(sqliteText: string): string {
  let n = 0;
  return sqliteText.replace(/\?/g, () => `$${++n}`);
}
