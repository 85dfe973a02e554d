import type { HookSet, ResolvedHook } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import { POINTS, type Point } from '../domain/points.js';
import { toolNamesFor } from '../domain/tool-names.js';

/** A hook as registered at one point, with its stable position there. */
export interface Registration {
  hook: ResolvedHook;
  /** Position among the hook set's hooks for this point, from 0, in registration order (matchers do not change it). */
  registrationIndex: number;
}

/** Hooks that apply to one invocation, each list sorted by (priority, registration index). */
export interface Selection {
  foreground: Registration[];
  background: Registration[];
}

/** Per-point registrations, computed once per hook set rather than per invocation. */
export class HookIndex {
  private readonly byPoint = new Map<Point, Registration[]>();

  constructor(hookSet: HookSet) {
    for (const point of POINTS) {
      const registrations = hookSet.hooks
        .filter((hook) => hook.points.includes(point))
        .map((hook, registrationIndex) => ({ hook, registrationIndex }))
        // After numbering: disabling a hook must not renumber the others.
        .filter(({ hook }) => hook.enabled)
        // Sorted once here: select keeps this order, so no invocation sorts (or allocates for it).
        .sort(byRunOrder);
      this.byPoint.set(point, registrations);
    }
  }

  /** docs/design.md §4 step 1: the point's hooks whose matcher matches, in run order. */
  select(invocation: Invocation): Selection {
    const foreground: Registration[] = [];
    const background: Registration[] = [];
    // The agent's own tool name and its Claude Code equivalents (domain/tool-names.ts).
    const names = toolNamesFor(invocation.agent, invocation.toolName);
    // In run order (sorted in the constructor); background hooks too, so the report lists
    // outcomes as explain reads them back.
    for (const registration of this.byPoint.get(invocation.point) ?? []) {
      if (!matchesAny(registration.hook, invocation.point, names)) continue;
      (registration.hook.mode === 'foreground' ? foreground : background).push(registration);
    }
    return { foreground, background };
  }
}

function matchesAny(hook: ResolvedHook, point: Point, names: readonly (string | null)[]): boolean {
  for (let i = 0; i < names.length; i++) if (hook.matches(point, names[i]!)) return true;
  return false;
}

const byRunOrder = (a: Registration, b: Registration): number =>
  a.hook.priority - b.hook.priority || a.registrationIndex - b.registrationIndex;
