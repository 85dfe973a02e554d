import { describe, expect, it } from 'vitest';
import { filterFromQuery } from '../../src/console/filters.js';
import { filterForm } from '../../src/console/pages/components.js';

describe('console filters: ship source and host (docs/ship.md, By source and host)', () => {
  it('a source and a host in the query select as the CLI flags do; the form offers them, escaped', () => {
    expect(filterFromQuery(new URLSearchParams('source=src-1&host=laptop-7&agent=codex'))).toEqual({
      source: 'src-1',
      host: 'laptop-7',
      agent: 'codex',
    });
    // A page that does not offer the field ignores it, as for every filter.
    expect(filterFromQuery(new URLSearchParams('source=src-1'), ['host'])).toEqual({});
    const form = String(filterForm('/denials', ['host', 'source'], new URLSearchParams('source="><script>x</script>')));
    expect(form).toContain('<label for="f-source">Source</label>');
    expect(form).not.toContain('<script>');
  });
});
