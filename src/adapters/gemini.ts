import type { AgentProtocol } from './agent-command.js';
import { GEMINI_EVENT_POINTS, invocationFromGemini } from './gemini-input.js';
import { geminiAnswer, geminiFailureAnswer } from './gemini-output.js';

/** Gemini CLI command mode: its payload in, its flat-decision answer out (see gemini-output.ts). */
export const geminiProtocol: AgentProtocol = {
  agent: 'gemini-cli',
  label: 'Gemini CLI',
  events: new Set(Object.keys(GEMINI_EVENT_POINTS)),
  toInvocation: invocationFromGemini,
  answer: (report, eventName, invocation) => geminiAnswer(report, eventName, invocation.toolInput),
  failure: geminiFailureAnswer,
};
