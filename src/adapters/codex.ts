import type { AgentProtocol } from './agent-command.js';
import { CODEX_EVENT_POINTS, invocationFromCodex } from './codex-input.js';
import { codexAnswer, codexFailureAnswer } from './codex-output.js';

/** Codex CLI command mode: its payload in, its strict answer out (see codex-output.ts). */
export const codexProtocol: AgentProtocol = {
  agent: 'codex',
  label: 'Codex',
  events: new Set(Object.keys(CODEX_EVENT_POINTS)),
  toInvocation: invocationFromCodex,
  answer: (report, eventName) => codexAnswer(report, eventName),
  failure: codexFailureAnswer,
};
