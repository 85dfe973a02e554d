/**
 * The console's only script (built to dist/console/assets/console.js by scripts/build-console.ts):
 * draws the charts described by `data-chart` attributes with uPlot, reloads a page that waits
 * for a running verify, and adds keyboard shortcuts. Pages are complete without it. Labels
 * come from the ledger and are hostile: uPlot writes them with textContent or onto a canvas,
 * never as markup.
 */
import uPlot from 'uplot';

interface ChartSpec {
  kind: 'time' | 'bars';
  title: string;
  /** Seconds since the epoch (time charts). */
  x?: number[];
  /** Category labels (bar charts). */
  labels?: string[];
  log?: boolean;
  series: { label: string; values: (number | null)[] }[];
}

const COLOURS = ['#1f5fa8', '#b3261e', '#c77700', '#6a3fa0', '#1b7f5a', '#8a5a00', '#3a6ea5', '#a0306b'];

function draw(el: HTMLElement): void {
  let spec: ChartSpec;
  try {
    spec = JSON.parse(el.dataset.chart ?? '') as ChartSpec;
  } catch {
    return;
  }
  const width = () => Math.max(260, Math.min(el.clientWidth || 600, 1100));
  const height = 220;
  const bars = spec.kind === 'bars';
  const labels = spec.labels ?? [];
  const xs = bars ? labels.map((_, k) => k) : (spec.x ?? []);
  if (xs.length === 0) {
    el.textContent = `${spec.title}: no data`;
    el.dataset.drawn = 'empty';
    return;
  }
  const data: uPlot.AlignedData = [xs, ...spec.series.map((s) => s.values.map((v) => (spec.log && v !== null && v <= 0 ? null : v)))];
  const options: uPlot.Options = {
    title: spec.title,
    width: width(),
    height,
    scales: bars
      ? { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } }
      : { x: { time: true }, y: spec.log ? { distr: 3 } : {} },
    axes: bars
      ? [
          {
            values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? short(labels[v] ?? '') : '')),
            rotate: labels.length > 6 ? -30 : 0,
            size: labels.length > 6 ? 80 : 40,
          } as uPlot.Axis,
          {},
        ]
      : [{}, {}],
    series: [
      bars ? { label: 'group', value: (_u, v) => (v === null ? '' : (labels[v] ?? '')) } : { label: 'time' },
      ...spec.series.map((s, k) => ({
        label: s.label,
        stroke: COLOURS[k % COLOURS.length],
        width: bars ? 0 : 2,
        spanGaps: false,
        ...(bars ? { fill: COLOURS[k % COLOURS.length], paths: uPlot.paths.bars!({ size: [0.7, 80] }), points: { show: false } } : {}),
      })),
    ],
  };
  el.textContent = '';
  const plot = new uPlot(options, data, el);
  el.dataset.drawn = 'true';
  let pending = 0;
  window.addEventListener('resize', () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => plot.setSize({ width: width(), height }));
  });
}

function short(text: string): string {
  return text.length > 24 ? `${text.slice(0, 23)}…` : text;
}

function start(): void {
  for (const el of document.querySelectorAll<HTMLElement>('[data-chart]')) draw(el);
  const reload = document.querySelector<HTMLElement>('[data-reload]');
  if (reload) setTimeout(() => location.reload(), Number(reload.dataset.reload) || 2000);
  // "/" jumps to the first filter field, as on most consoles.
  document.addEventListener('keydown', (event) => {
    const target = event.target as HTMLElement | null;
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
    const field = document.querySelector<HTMLElement>('form.filters input, form.filters select');
    if (field) {
      event.preventDefault();
      field.focus();
    }
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
