/**
 * Tool names across agents. Hook sets are written against Claude Code's tool names (`Bash`,
 * `Write`, `Edit`, `Read` ...); Codex and Gemini CLI call the same tools by their own names.
 * A hook's `match` applies to the agent's own name and to the Claude Code names listed here,
 * so `match: "Bash"` also guards Gemini's `run_shell_command` and Codex's shell tool, and a
 * hook may still match the agent's own name (`match: "run_shell_command"`). The invocation
 * keeps the agent's own name: reports, `--tool` and replay see what the agent sent.
 * docs/agents.md has the table.
 */

/** Agent → its tool name → the Claude Code names a matcher also tries. */
export const AGENT_TOOL_ALIASES: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  // Codex reports its shell tool under several names across versions; apply_patch writes and edits.
  codex: {
    shell: ['Bash'],
    local_shell: ['Bash'],
    shell_command: ['Bash'],
    exec_command: ['Bash'],
    unified_exec: ['Bash'],
    container_exec: ['Bash'],
    apply_patch: ['Write', 'Edit'],
    read_file: ['Read'],
    list_dir: ['LS'],
    grep_files: ['Grep'],
    web_search: ['WebSearch'],
    update_plan: ['TodoWrite'],
    view_image: ['Read'],
  },
  // Gemini CLI's built-in tools (`gemini hooks migrate` maps the first four the same way).
  'gemini-cli': {
    run_shell_command: ['Bash'],
    replace: ['Edit'],
    write_file: ['Write'],
    read_file: ['Read'],
    read_many_files: ['Read'],
    glob: ['Glob'],
    search_file_content: ['Grep'],
    grep_search: ['Grep'],
    list_directory: ['LS'],
    web_fetch: ['WebFetch'],
    google_web_search: ['WebSearch'],
    write_todos: ['TodoWrite'],
  },
};

/** The agent part of a recorded agent (`codex/worker` → `codex`). */
function baseAgent(agent: string): string {
  const slash = agent.indexOf('/');
  return slash === -1 ? agent : agent.slice(0, slash);
}

/**
 * Every name a matcher is tried against for this tool: the agent's own name first, then its
 * Claude Code equivalents. Other agents (and Claude Code itself) have exactly their own name.
 */
export function toolNamesFor(agent: string | null, toolName: string | null): readonly (string | null)[] {
  if (toolName === null || agent === null) return [toolName];
  const table = AGENT_TOOL_ALIASES[baseAgent(agent)];
  const aliases = table !== undefined && Object.hasOwn(table, toolName) ? table[toolName]! : [];
  return aliases.length === 0 ? [toolName] : [toolName, ...aliases];
}
