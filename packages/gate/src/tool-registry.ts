import { BoundedCache } from './bounded-cache.js';
import { analysis, analysisSlot } from './analysis-version.js';
import { analyzeCode, analyzeShell } from './command-analysis.js';
import { looksLikeCommand } from './code-analysis.js';
import { Findings, R } from './findings.js';
import { SEVERE_IN_SCRIPTS, writtenContentFindings } from './file-content-rules.js';
import { PathClass, looksLikePath, pathFacts } from './path-model.js';
import { argumentsHoldSecret } from './secret-shapes.js';
import { structuredCallFindings, urlSecretFindings } from './structured-rules.js';
import { callTextFindings, editorEscapeCommands } from './call-text-rules.js';
import { callFindingsV8 } from './rules-v8.js';
import { callFindingsV10 } from './rules-v10.js';
import { callFindingsV11 } from './rules-v11.js';
import { callFindingsV12 } from './rules-v12.js';
import { callFindingsV13 } from './rules-v13.js';
import { callFindingsV9, forgetCallStrings } from './rules-v9.js';
import { isPlainReadingPython } from './plain-python.js';
import { touchPath, type PathAction } from './path-rules.js';
import { touchUrl, urlsIn } from './url-rules.js';
import { STRING_FACTS_MAX_LENGTH, factsOf, nameFactsOf } from './string-facts.js';

/**
 * Tools by meaning (rules version 2): a registry maps the usual agent tools
 * to what they do with their arguments. Claude Code's Bash, Read, Write,
 * Edit, MultiEdit, NotebookEdit, WebFetch, Glob and Grep; the reference MCP
 * servers (filesystem, shell, git, fetch) and common function-calling names.
 * MCP names (`mcp__<server>__<tool>`, `server.tool`, `server/tool`) resolve
 * by their tool part. A tool the registry does not know is read the
 * strictest way: every string argument is inspected for commands, paths and
 * URLs, so an unknown name is never a way around a rule.
 */
export const ToolKind = {
  exec: 'exec', code: 'code', read: 'read', write: 'write', edit: 'edit', list: 'list', move: 'move', delete: 'delete', fetch: 'fetch', git: 'git',
  unknown: 'unknown',
} as const;
/** One of {@link ToolKind}. */
export type ToolKind = (typeof ToolKind)[keyof typeof ToolKind];

const REGISTRY: ReadonlyMap<string, ToolKind> = new Map<string, ToolKind>([
  ...names('exec', 'bash', 'shell', 'sh', 'zsh', 'terminal', 'console', 'run_command', 'execute_command', 'exec_command', 'run_shell_command', 'shell_exec', 'shell_execute', 'execute_shell', 'execute', 'exec', 'run', 'command', 'cmd', 'run_terminal_cmd', 'run_in_terminal', 'terminal_run', 'run_terminal_command', 'bash_tool', 'shell_tool', 'terminal_tool', 'run_bash', 'execute_bash', 'bash_exec', 'start_process', 'interact_with_process', 'ssh_exec', 'ssh', 'docker_exec', 'kubectl_exec', 'container_exec', 'process', 'spawn', 'subprocess', 'powershell', 'pwsh', 'local_shell', 'run_script', 'execute_script', 'shell_command', 'system', 'os_command', 'sandbox_exec', 'computer_bash', 'run_cmd', 'exec_shell', 'launch_process', 'cli', 'run_cli'),
  ...names('code', 'python', 'python3', 'python_repl', 'code_interpreter', 'execute_python', 'run_python', 'run_code', 'execute_code', 'code_execution', 'exec_python', 'node', 'javascript', 'js', 'js_eval', 'eval', 'repl', 'jupyter', 'execute_cell', 'run_notebook_cell', 'ipython', 'evaluate', 'run_javascript', 'execute_javascript', 'ruby', 'perl', 'php', 'deno', 'bun'),
  ...names('read', 'read', 'read_file', 'read_text_file', 'read_media_file', 'read_multiple_files', 'view', 'view_file', 'cat', 'open_file', 'get_file_contents', 'file_read', 'readfile', 'notebook_read', 'read_resource', 'get_file', 'fs_read', 'load_file', 'read_notebook', 'open', 'get_file_content', 'show_file', 'read_document', 'readfile_tool', 'file_content', 'get_resource'),
  ...names('write', 'write', 'write_file', 'create_file', 'file_write', 'save_file', 'put_file', 'create_or_update_file', 'push_files', 'append_file', 'fs_write', 'writefile', 'append_to_file', 'overwrite_file', 'save', 'upload_file', 'write_to_file', 'create_new_file', 'new_file', 'touch', 'create_directory', 'mkdir', 'make_directory'),
  ...names('edit', 'edit', 'edit_file', 'multiedit', 'multi_edit', 'notebookedit', 'notebook_edit', 'str_replace_editor', 'str_replace_based_edit_tool', 'apply_patch', 'patch_file', 'replace_in_file', 'insert', 'search_replace', 'edit_block', 'update_file', 'modify_file', 'apply_diff', 'str_replace', 'insert_content', 'text_editor', 'edit_notebook', 'replace', 'file_edit', 'set_file_permissions', 'chmod'),
  ...names('list', 'glob', 'grep', 'ls', 'list_directory', 'list_dir', 'list_directory_with_sizes', 'directory_tree', 'search_files', 'find_files', 'search_code', 'list_files', 'get_file_info', 'file_search', 'codebase_search', 'find', 'search', 'ripgrep', 'rg', 'list_allowed_directories', 'tree', 'stat', 'file_info', 'list_dir_tool', 'grep_search'),
  ...names('move', 'move_file', 'rename_file', 'copy_file', 'rename', 'move', 'copy', 'mv', 'cp'),
  ...names('delete', 'delete_file', 'remove_file', 'rm', 'delete_directory', 'remove_directory', 'unlink', 'delete_path', 'rmdir', 'trash_file'),
  ...names('fetch', 'webfetch', 'web_fetch', 'fetch', 'http_get', 'http_request', 'browse', 'browser_navigate', 'navigate', 'open_url', 'get_url', 'download', 'curl', 'wget', 'fetch_url', 'scrape', 'scrape_url', 'http', 'request', 'get_webpage', 'read_url', 'url_fetch', 'fetch_webpage', 'browser_open', 'puppeteer_navigate', 'playwright_navigate', 'firecrawl_scrape', 'download_file'),
]);

function names(kind: ToolKind, ...list: string[]): [string, ToolKind][] {
  return list.map((name) => [name, kind]);
}

/** The tool part of a name, lowercased, words joined by `_` (`mcp__fs__readFile` -> `read_file`). */
export function canonicalToolName(tool: string): string {
  let name = tool;
  const mcp = name.lastIndexOf('__');
  if (mcp !== -1) name = name.slice(mcp + 2);
  const sep = Math.max(name.lastIndexOf('.'), name.lastIndexOf('/'), name.lastIndexOf(':'));
  if (sep !== -1 && sep < name.length - 1) name = name.slice(sep + 1);
  name = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return name;
}

const EXEC_WORDS = /(?:^|_)(?:shell|bash|terminal|command|cmd|exec|execute|run|spawn|process|script|ssh|powershell|console)(?:_|$)/;
const CODE_WORDS = /(?:^|_)(?:python|code|repl|eval|interpreter|javascript|notebook_cell|jupyter)(?:_|$)/;
const READ_WORDS = /(?:^|_)(?:read|view|cat|open|get_file|load|show)(?:_|$)/;
const WRITE_WORDS = /(?:^|_)(?:write|create|save|put|append|upload|edit|patch|replace|insert|update|modify|overwrite|touch|mkdir|chmod|chown|set)(?:_|$)/;
const DELETE_WORDS = /(?:^|_)(?:delete|remove|rm|unlink|destroy|drop|purge|wipe|erase|trash|terminate|truncate|uninstall|teardown|deprovision|kill)(?:_|$)/;
const SCALING_WORDS = /(?:^|_)(?:scale|resize|autoscale|set_replicas|update_replicas|desired)(?:_|$)/;
/** Version 5: argument names of what a fetch tool sends. */
const BODY_KEY = /^(?:body|data|json|payload|form|form_data|content|post_data|params|query_params)$/;
/** Version 5: words of tools that send what they are given to people or places (messages, posts, mail, comments, webhooks). */
const SENDING_WORDS = /(?:^|_)(?:post|posts|send|message|messages|msg|reply|comment|comments|tweet|toot|notify|notification|publish|share|email|mail|sms|chat|webhook|dm|forward|broadcast|announce|paste|gist|issue|issues|discussion|status|say|text|whatsapp|telegram|slack|discord|teams)(?:_|$)/;
/** Verbs of an unknown tool's words, as bits: delete 1, write 2, scaling 4, sending 8 (read from version 5). */
const verbsOf = (words: string): number => (DELETE_WORDS.test(words) ? 1 : 0) | (WRITE_WORDS.test(words) ? 2 : 0) | (SCALING_WORDS.test(words) ? 4 : 0) | (SENDING_WORDS.test(words) ? 8 : 0);
/** Verbs by words (the words of a tool and action type repeat call after call). */
const verbMemo = new BoundedCache<number>(65_536, 1024);

function kindOf(tool: string): ToolKind {
  const name = canonicalToolName(tool);
  const known = REGISTRY.get(name);
  if (known !== undefined) return known;
  if (name.startsWith('git_') || name === 'git') return 'git';
  // Database tools (`execute_sql`, `run_query`) run statements, not shell commands: read as unknown (every string), SQL rules apply.
  if (/(?:^|_)(?:sql|query|queries|postgres|postgresql|mysql|sqlite|mongo|mongodb|redis|database|db)(?:_|$)/.test(name)) return 'unknown';
  // Names the registry does not list, read by their words: `run_shell_script`, `read_config_file`.
  if (EXEC_WORDS.test(name) && !/(?:^|_)(?:get|list|describe|status)(?:_|$)/.test(name)) return 'exec';
  if (CODE_WORDS.test(name)) return 'code';
  return 'unknown';
}

const kindMemo = new BoundedCache<ToolKind>(65_536, 256);

/** Tool names (their tool part) that run database statements: `mcp__postgres__query`, `execute_sql`. */
const SQL_TOOL_WORDS = /(?:^|_)(?:sql|query|queries|postgres|postgresql|mysql|mariadb|sqlite|mssql|database|db|bigquery|snowflake|redshift|clickhouse|duckdb|mongo|mongodb|redis)(?:_|$)/;

/** True when a tool's name (its tool part) names a database: its statements get the SQL pattern rules. */
export function isSqlToolName(tool: string): boolean {
  return SQL_TOOL_WORDS.test(canonicalToolName(tool));
}

/** What a tool does with its arguments. */
export function toolKind(tool: string): ToolKind {
  return kindMemo.get(tool, kindOf);
}

/** Argument names that hold a command line. */
const COMMAND_KEYS = /^(?:command|cmd|commands|script|shell_command|bash_command|command_line|commandline|cmdline|cmd_line|input|line|run|exec|shell|bash|sh|code|program|statement|instruction)$/;
/** Argument names that hold argv (joined after the command). */
const ARGV_KEYS = /^(?:args|argv|arguments|params|parameters|options|flags)$/;
const CODE_KEYS = /^(?:code|source|script|program|python_code|js_code|javascript|cell|input|expression|snippet|content)$/;
const PATH_KEYS = /(?:path|file|filename|dir|directory|folder|target|source|destination|dest|src|dst|uri|root|location|notebook|cwd|workdir|working_directory|output|repo|repository)s?$/;
const URL_KEYS = /(?:url|uri|href|link|endpoint|address|webpage|site|page)s?$/;
/** Search patterns that look for secrets. */
const SECRET_TERMS = /(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|private[_ -]key|begin (?:rsa|openssh|ec|dsa|pgp)|aws_secret|token|credential|bearer)/i;
const CONTENT_KEYS = /^(?:content|contents|text|body|data|new_string|old_string|new_str|old_str|new_source|edits|insert_text|file_text|replacement|diff|patch|message|description|prompt|query|pattern|regex|search|replace|title|summary|note|comment)$/;

/** Version 4: tool names that end in a program's name (its argv given as an array). */
const PROGRAM_TOOL = /(?:^|__|[._-])(kubectl|oc|helm|docker|podman|terraform|git|gh|aws|gcloud|gsutil|az|npm|pip|psql|mysql|redis-cli|systemctl|rclone|rsync|ssh|scp|curl|wget|rm|stripe)$/i;

/** Shell-quotes one argv element (so `{command: "rm", args: ["-rf", "/"]}` reads as `rm -rf /`). */
function quote(text: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

function stringsOf(value: unknown, out: string[], depth: number): void {
  if (depth > 8 || out.length > 256) return;
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out, depth + 1);
  else if (typeof value === 'object' && value !== null) for (const key in value) if (Object.hasOwn(value, key)) stringsOf((value as Record<string, unknown>)[key], out, depth + 1);
}

/** The command line of an execution tool's arguments, or null when none is named. */
function commandLine(args: Record<string, unknown>): string | null {
  let head: string | null = null;
  const argv: string[] = [];
  for (const key in args) {
    if (!Object.hasOwn(args, key)) continue;
    const lower = key.toLowerCase();
    const value = args[key];
    if (head === null && COMMAND_KEYS.test(lower)) {
      if (typeof value === 'string') head = value;
      else if (Array.isArray(value)) head = value.map((v) => quote(String(v))).join(' ');
    } else if (ARGV_KEYS.test(lower) && Array.isArray(value)) {
      for (const v of value) if (typeof v === 'string' || typeof v === 'number') argv.push(quote(String(v)));
    }
  }
  if (head === null) return null;
  return argv.length === 0 ? head : `${head} ${argv.join(' ')}`;
}

/**
 * What the visitors of {@link walk} read besides the key and the string: the
 * call being read (module-level, so a walk allocates no closure; toolFindings
 * is synchronous and never re-entered).
 */
const NO_STRINGS: string[] = [];
const NO_FINDINGS = new Findings();
const NO_OBJECT: Record<string, unknown> = {};
let visitFindings: Findings = NO_FINDINGS;
let visitKind: ToolKind = 'unknown';
let visitAction: PathAction = 'read';
let visitObject: Record<string, unknown> = NO_OBJECT;
let visitWritten: string[] = NO_STRINGS;
let visitExecuted = false;
/** Version 5: the paths a write or edit call names (for the readings of workflows, manifests and build scripts). */
let visitPaths: string[] = NO_STRINGS;
let visitRecursive = false;
/** Nodes a walk may still visit (1024 per call). */
let walkBudget = 0;

/** Walks an object's members with their names (bounded by {@link walkBudget}), calling `visit` on each string. */
function walk(value: unknown, key: string, visit: (key: string, text: string) => void, depth: number): void {
  if (depth > 8 || --walkBudget < 0) return;
  if (typeof value === 'string') visit(key, value);
  else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walk(value[i], key, visit, depth + 1);
  } else if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name)) walk((value as Record<string, unknown>)[name], lowerKey(name), visit, depth + 1);
  }
}

/** An argument name lowercased (without a new string when it has no capital letter). */
function lowerKey(name: string): string {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return name.toLowerCase();
  }
  return name;
}

/** Paths named by an apply_patch / unified diff text. */
function patchPaths(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:\*\*\* (?:Add|Update|Delete|Move to:?) File: |\+\+\+ (?:b\/)?|--- (?:a\/)?|diff --git a\/\S+ b\/)(\S+)/gm)) if (m[1] !== undefined && m[1] !== '/dev/null') out.push(m[1]);
  return out;
}

/** Scratch of urlFindings and of inspectStringMemo (their lists are copied into the memos; neither is re-entered). */
const urlScratch = new Findings();
const stringScratch = new Findings();
/** Findings of the URLs in one string. */
const urlFindings = (text: string): readonly number[] => {
  const local = urlScratch;
  local.reset();
  for (const url of urlsIn(text.trim())) touchUrl(local, url);
  return Object.freeze(local.list.slice());
};
/** {@link urlFindings}, remembered in the string's entry of string-facts.ts (URLs repeat), apart for version 2 and for 3 and later (touchUrl reads them differently). */
function urlFindingsMemo(text: string): readonly number[] {
  if (text.length > STRING_FACTS_MAX_LENGTH) return urlFindings(text);
  const facts = factsOf(text);
  if (analysis.v3) return (facts.urls3 ??= urlFindings(text));
  return (facts.urls2 ??= urlFindings(text));
}

const NO_INDEXES: readonly number[] = Object.freeze([]);
/** Classes of argument names, as bits: command, URL, path, content (inspectString reads a name only through them). */
const keyClassOf = (key: string): number => (COMMAND_KEYS.test(key) ? 1 : 0) | (URL_KEYS.test(key) ? 2 : 0) | (PATH_KEYS.test(key) ? 4 : 0) | (CONTENT_KEYS.test(key) ? 8 : 0);
/** {@link keyClassOf}, remembered in the name's entry of string-facts.ts. */
function keyClass(key: string): number {
  const facts = nameFactsOf(key);
  if (facts.keyClass === -1) facts.keyClass = keyClassOf(key);
  return facts.keyClass;
}
const ACTIONS: readonly PathAction[] = ['read', 'write', 'delete', 'delete_tree'];

/**
 * {@link inspectString}, remembered in the string's entry of string-facts.ts
 * (strings repeat: subjects, bodies, ids): (version slot, action, key class,
 * text) decides its answer, so the entry keeps it by the reading those name.
 */
function inspectStringMemo(findings: Findings, key: string, text: string, action: PathAction): void {
  if (text.length > 1024) {
    inspectString(findings, key, text, action);
    return;
  }
  const reading = (analysisSlot() * ACTIONS.length + ACTIONS.indexOf(action)) * 16 + keyClass(key);
  const facts = factsOf(text);
  let hit = facts.inspectedAs === reading ? facts.inspected : facts.inspectedOther?.get(reading);
  if (hit === undefined) {
    const local = stringScratch;
    local.reset();
    inspectString(local, key, text, action);
    hit = local.list.length === 0 ? NO_INDEXES : Object.freeze(local.list.slice());
    if (facts.inspectedAs === -1) {
      facts.inspectedAs = reading;
      facts.inspected = hit;
    } else (facts.inspectedOther ??= new Map()).set(reading, hit);
  }
  if (hit.length > 0) findings.addAll(hit);
}

/** Strings of an unknown tool are read as commands, paths or URLs, whichever they look like. */
function inspectString(findings: Findings, key: string, text: string, action: PathAction): void {
  if (text.length === 0) return;
  if (COMMAND_KEYS.test(key) && text.length < 65_536) {
    findings.addAll(analyzeShell(text));
    return;
  }
  if (looksLikeCommand(text)) {
    findings.addAll(analyzeShell(text));
    return;
  }
  const trimmed = text.trim();
  if (URL_KEYS.test(key) || trimmed.includes('://')) {
    for (const url of urlsIn(trimmed)) touchUrl(findings, url);
    if (!trimmed.includes('://') && /^(?:169\.254\.169\.254|metadata\.google\.internal)/.test(trimmed)) touchUrl(findings, trimmed);
    if (trimmed.includes('://')) return;
  }
  if (!/\s/.test(trimmed) && looksLikePath(trimmed) && (PATH_KEYS.test(key) || !CONTENT_KEYS.test(key) || trimmed.startsWith('~') || trimmed.startsWith('/'))) {
    touchPath(findings, trimmed, action);
    if (action !== 'read') touchPath(findings, trimmed, 'read');
  }
}

/** Working directories an execution tool may name (read as paths). */
const CWD_KEYS: readonly string[] = ['cwd', 'workdir', 'working_directory', 'directory'];
const LIST_PATTERN_KEY = /^(?:pattern|regex|query|search|q|glob_pattern|include|exclude)$/;
const SECRET_FILE_PATTERN = /(?:^|\*)\.(?:env|pem|key)\b|id_rsa|credentials|\.ssh|\.aws|\.ledger/i;
const PATTERN_OR_GLOB_KEY = /^(?:pattern|glob)$/;
const PATCH_KEY = /^(?:patch|diff|input)$/;
const PATCH_TEXT = /^(?:\*\*\* |--- |diff --git|\+\+\+ )/m;
const DELETE_FILE_LINE = /^\*\*\* Delete File: /m;
const EDITOR_COMMAND = /^(?:view|create|str_replace|insert|undo_edit)$/;
const MOVE_SOURCE_KEY = /^(?:source|src|from|old_path|path|file)s?$/;

// The visitors of each kind of tool (module-level: a call allocates none).
const visitExec = (key: string, text: string): void => {
  if (!CONTENT_KEYS.test(key) || looksLikeCommand(text)) visitFindings.addAll(analyzeShell(text));
};
const visitCode = (_key: string, text: string): void => visitFindings.addAll(analyzeCode(text));
const visitRead = (key: string, text: string): void => {
  if (visitKind === 'list' && LIST_PATTERN_KEY.test(key) && !text.includes('/') && !SECRET_FILE_PATTERN.test(text)) return;
  const trimmed = text.trim();
  if (trimmed.includes('://')) for (const url of urlsIn(trimmed)) touchUrl(visitFindings, url);
  else if (looksLikePath(trimmed) || PATH_KEYS.test(key) || PATTERN_OR_GLOB_KEY.test(key)) touchPath(visitFindings, trimmed.replace(/^\*\*\//, ''), 'read');
};
const visitWrite = (key: string, text: string): void => {
  const findings = visitFindings;
  const trimmed = text.trim();
  if (analysis.v3 && CONTENT_KEYS.test(key)) visitWritten.push(text);
  if (PATCH_KEY.test(key) && PATCH_TEXT.test(text)) {
    for (const path of patchPaths(text)) touchPath(findings, path, DELETE_FILE_LINE.test(text) ? 'delete' : 'write');
    return;
  }
  if (CONTENT_KEYS.test(key)) return;
  if (key === 'command' && EDITOR_COMMAND.test(trimmed)) return;
  if (looksLikePath(trimmed) || PATH_KEYS.test(key)) {
    if (analysis.v3 && EXECUTED_FILE.test(trimmed.toLowerCase())) visitExecuted = true;
    if (analysis.v5 && visitPaths.length < 16) visitPaths.push(trimmed);
    const viewOnly = visitObject.command === 'view';
    touchPath(findings, trimmed, viewOnly ? 'read' : 'write');
    touchPath(findings, trimmed, 'read');
  }
};
const visitMove = (key: string, text: string): void => {
  const trimmed = text.trim();
  if (MOVE_SOURCE_KEY.test(key)) {
    touchPath(visitFindings, trimmed, 'delete');
    touchPath(visitFindings, trimmed, 'read');
  } else if (looksLikePath(trimmed) || PATH_KEYS.test(key)) touchPath(visitFindings, trimmed, 'write');
};
const visitDelete = (key: string, text: string): void => {
  if (looksLikePath(text.trim()) || PATH_KEYS.test(key)) touchPath(visitFindings, text.trim(), visitRecursive ? 'delete_tree' : 'delete');
};
const visitFetch = (key: string, text: string): void => {
  if (text.indexOf('://') !== -1) visitFindings.addAll(urlFindingsMemo(text));
  else if (URL_KEYS.test(key)) touchUrl(visitFindings, text.trim());
};
const visitGit = (key: string, text: string): void => {
  if (CONTENT_KEYS.test(key)) return;
  const trimmed = text.trim();
  if (trimmed.startsWith('/') || trimmed.startsWith('~')) touchPath(visitFindings, trimmed, 'read');
  if (trimmed.includes('://')) for (const url of urlsIn(trimmed)) touchUrl(visitFindings, url);
};
const visitUnknown = (key: string, text: string): void => inspectStringMemo(visitFindings, key, text, visitAction);

/**
 * The version-2 findings of a tool call's arguments. `execHint` / `sqlHint`:
 * the tool or action type says it runs commands or statements (version 1's
 * reading, kept). `actionWords`: the tool and action type, for unknown tools' verbs.
 */
export function toolFindings(findings: Findings, tool: string, actionWords: string, args: unknown, execHint: boolean, kind: ToolKind = toolKind(tool)): void {
  findingsOf(findings, tool, kind === 'unknown' ? verbMemo.get(actionWords, verbsOf) : 0, args, execHint, kind);
}

/** {@link toolFindings}, given the verbs of the call's words (for unknown tools: {@link callVerbs}). */
function findingsOf(findings: Findings, tool: string, verbs: number, args: unknown, execHint: boolean, kind: ToolKind): void {
  const object = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { value: args };
  forgetCallStrings();
  walkBudget = 1024;
  visitFindings = findings;
  visitKind = kind;
  visitObject = object;
  switch (kind) {
    case 'exec': {
      const line = commandLine(object);
      // Version 7: a Python-named runner given plain Python that only reads project files reads it as code, not as a shell line.
      const python = analysis.v7 && line !== null ? plainPython(tool, object) : null;
      if (python !== null) findings.addAll(analyzeCode(python));
      else if (line !== null) findings.addAll(analyzeShell(line));
      else {
        walk(object, '', visitExec, 0);
        // Version 6: a tool named like a runner but given fields, not a command (`create_run` with `plan_mode: "destroy"`), is a structured call.
        if (analysis.v6) structuredCallFindings(findings, tool, 0, object);
      }
      for (let i = 0; i < CWD_KEYS.length; i++) {
        const value = object[CWD_KEYS[i] as string];
        if (typeof value === 'string') touchPath(findings, value, 'read');
      }
      break;
    }
    case 'code': {
      let read = false;
      for (const key in object) {
        const value = object[key];
        if (Object.hasOwn(object, key) && typeof value === 'string' && CODE_KEYS.test(key.toLowerCase())) {
          findings.addAll(analyzeCode(value));
          read = true;
        }
      }
      if (!read) walk(object, '', visitCode, 0);
      break;
    }
    case 'read': case 'list': {
      const pattern = [object.pattern, object.regex, object.query, object.search].find((v): v is string => typeof v === 'string');
      if (kind === 'list' && pattern !== undefined && SECRET_TERMS.test(pattern)) {
        const where = [object.path, object.directory, object.dir, object.root, object.cwd].find((v): v is string => typeof v === 'string');
        // Version 9: searching the project's source tree (src/, lib/, app/, ...) for a credential word is not reading a credential store.
        const sourceTree = analysis.v9 && where !== undefined && /(?:^|\/)(?:src|lib|app|apps|packages|test|tests|spec|internal|cmd|pkg|server|client|components|services|api|web)(?:\/|$)/.test(where) && !/(?:^|\/)\.[^/.]/.test(where);
        if (where !== undefined && !sourceTree && (pathFacts(where).classes & PathClass.project) === 0) findings.add(R.credentialSearch);
      }
      walk(object, '', visitRead, 0);
      break;
    }
    case 'write': case 'edit': {
      const written: string[] = [];
      const paths: string[] = analysis.v5 ? [] : NO_STRINGS;
      visitWritten = written;
      visitPaths = paths;
      visitExecuted = false;
      walk(object, '', visitWrite, 0);
      visitWritten = NO_STRINGS;
      visitPaths = NO_STRINGS;
      if (visitExecuted && object.command !== 'view') for (const content of written) scriptFindings(findings, content);
      if (analysis.v5 && object.command !== 'view') for (const path of paths) writtenContentFindings(findings, path, written, analyzeShell, analyzeCode);
      if (typeof object.mode === 'string' || typeof object.mode === 'number') {
        const mode = String(object.mode);
        if (/^0?[2467][0-7]{3}$/.test(mode) || /s/.test(mode)) findings.add(R.setuid);
        if (/^0?[0-7]{2}[2367]$|^0?[0-7]{3}[2367]$|o\+w|a\+w/.test(mode)) findings.add(R.worldWritable);
      }
      break;
    }
    case 'move':
      walk(object, '', visitMove, 0);
      break;
    case 'delete': {
      visitRecursive = object.recursive === true || object.force === true || object.r === true;
      walk(object, '', visitDelete, 0);
      break;
    }
    case 'fetch':
      walk(object, '', visitFetch, 0);
      findings.add(R.fetch);
      // Version 5: a secret in the body a fetch tool sends (POST data, JSON, a form) leaves with the request.
      if (analysis.v5) {
        for (const key in object) if (Object.hasOwn(object, key) && BODY_KEY.test(lowerKey(key)) && argumentsHoldSecret(object[key])) findings.add(R.secretInMessage);
      }
      // Version 6: a secret in the URL it requests (a query string, percent-encoded or not).
      if (analysis.v6) urlSecretFindings(findings, object);
      break;
    case 'git': {
      const name = canonicalToolName(tool);
      if (/(?:^|_)push$/.test(name) && (object.force === true || object.force_with_lease === true)) findings.add(R.gitHistory);
      if (/(?:^|_)reset$/.test(name) && (object.mode === 'hard' || object.hard === true)) findings.add(R.gitHistory);
      if (/(?:^|_)(?:clean|branch_delete|delete_branch)$/.test(name)) findings.add(R.gitHistory);
      if (/(?:^|_)config$/.test(name)) for (const v of [object.key, object.name]) if (typeof v === 'string' && /hookspath|sshcommand|fsmonitor|pager|editor|askpass|^alias\./i.test(v)) findings.add(R.gitConfig);
      walk(object, '', visitGit, 0);
      break;
    }
    default: {
      // Version 4: a tool named after a program (mcp__kubernetes__kubectl) given only its argv runs that program.
      const program = analysis.v4 ? PROGRAM_TOOL.exec(tool)?.[1] : undefined;
      if (program !== undefined && commandLine(object) === null) {
        const line = commandLine({ command: program.toLowerCase(), ...object });
        if (line !== null) findings.addAll(analyzeShell(line));
      }
      // Unknown tool: every string argument, by what it looks like.
      visitAction = (verbs & 1) !== 0 ? 'delete' : (verbs & 2) !== 0 ? 'write' : 'read';
      if (execHint) {
        const line = commandLine(object);
        if (line !== null) findings.addAll(analyzeShell(line));
      }
      walk(object, '', visitUnknown, 0);
      // Version 5: a secret in what a messaging, posting or sending tool sends.
      if (analysis.v5 && (verbs & 8) !== 0 && argumentsHoldSecret(object)) findings.add(R.secretInMessage);
      // Version 6: authority over code hosting, relaxed protection, infrastructure destroyed, attachments and bulk sends; secrets in URLs.
      if (analysis.v6) structuredCallFindings(findings, tool, verbs, object);
      if ((verbs & 1) !== 0) findings.add(R.structuredDestructive);
      structured(findings, object, (verbs & 4) !== 0);
    }
  }
  // Version 7: what the call's text says on every surface (content that runs later, environment, sources, IP literals, ...).
  if (analysis.v7) {
    if (callTextFindings(findings, kind, toolWordsMemo.get(tool, canonicalToolName), object)) for (const command of editorEscapeCommands(object)) findings.addAll(analyzeShell(command));
  }
  // Version 8: argv arrays as the commands they run, LEDGER_* in env objects, sharing, authority, lifecycle scripts, capture URLs, typosquats.
  if (analysis.v8) callFindingsV8(findings, kind, tool, toolWordsMemo.get(tool, canonicalToolName), object, analyzeShell);
  // Version 9: injection payloads in fields, climbing paths, .git internals, kubeconfigs, IaC exposure, agent instruction files, personal data, merges.
  if (analysis.v9) callFindingsV9(findings, kind, toolWordsMemo.get(tool, canonicalToolName), object, analyzeShell);
  if (analysis.v10) callFindingsV10(findings, kind, toolWordsMemo.get(tool, canonicalToolName), tool, object);
  if (analysis.v11) callFindingsV11(findings, kind, tool, object);
  if (analysis.v12) callFindingsV12(findings, kind, tool, object);
  if (analysis.v13) callFindingsV13(findings, kind, tool, object);
  // Nothing of the call is kept past it.
  visitFindings = NO_FINDINGS;
  visitObject = NO_OBJECT;
}

/** Tool names in word form (they repeat call after call). */
const toolWordsMemo = new BoundedCache<string>(65_536, 256);
/** Runners named for Python (`python_exec`, `run_python`, `exec_python_code`). */
const PYTHON_TOOL = /(?:^|_)(?:python3?|py|ipython)(?:_|$)/;

/** Version 7: the code of a Python-named runner when it is plain Python that only reads project files (plain-python.ts), else null. */
function plainPython(tool: string, object: Record<string, unknown>): string | null {
  if (!PYTHON_TOOL.test(toolWordsMemo.get(tool, canonicalToolName))) return null;
  let code: string | null = null;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const value = object[key];
    if (typeof value !== 'string' || !CODE_KEYS.test(lowerKey(key))) return null;
    if (code !== null) return null;
    code = value;
  }
  return code !== null && isPlainReadingPython(code) ? code : null;
}

/**
 * Version 3: files whose content will be run (package.json scripts,
 * Makefiles, CI workflows, Dockerfiles, editor tasks, git hooks, shell
 * scripts). Writing commands into them is running those commands later.
 */
const EXECUTED_FILE = /(?:^|\/)(?:package\.json|makefile|gnumakefile|justfile|taskfile\.ya?ml|dockerfile|containerfile|(?:docker-)?compose\.ya?ml|\.gitlab-ci\.yml|jenkinsfile|setup\.py|conftest\.py|tasks\.json|[^/]+\.(?:sh|bash|zsh|command|ps1)|\.husky\/[^/]+|\.circleci\/config\.yml|\.github\/workflows\/[^/]+\.ya?ml)$/;
const SCRIPT_PREFIX = /^(?:-\s*)?(?:(?:run|script|command|cmd|entrypoint|before_script|after_script|args)\s*:\s*[|>]?-?\s*|(?:RUN|CMD|ENTRYPOINT)\s+(?:\[\s*)?)/i;

/** The severe findings of the commands in a file's new content (lines, quoted JSON strings, YAML run: and Dockerfile RUN), bounded. */
function scriptFindings(findings: Findings, content: string): void {
  const lines = content.slice(0, 65_536).split('\n', 2048);
  for (const line of lines) {
    const text = line.trim().replace(SCRIPT_PREFIX, '');
    if (text === '' || text.startsWith('#') || text.startsWith('//')) continue;
    const candidates = text.includes('"') ? [text, ...[...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\"/g, '"'))] : [text];
    for (const candidate of candidates) {
      if (!looksLikeCommand(candidate)) continue;
      for (const index of analyzeShell(candidate)) if (SEVERE_IN_SCRIPTS.has(index)) findings.add(index);
    }
  }
}

/** Structured calls that say in fields what a command line would say in flags (`{replicas: 0}`). `scaling`: the call's words name scaling. */
function structured(findings: Findings, args: Record<string, unknown>, scaling: boolean): void {
  structuredBudget = 256;
  visitStructured(findings, args, '', 0, scaling);
}
/** Nodes {@link structured} may still visit. */
let structuredBudget = 0;
const SCALE_KEY = /^(?:replicas|replicacount|desiredcount|desiredcapacity|minsize|maxsize|instancecount|instances|nodecount|size|count|scale)$/;
const SCALE_WORD = /replica|desired|capacity|instance|node/;
function visitStructured(findings: Findings, value: unknown, rawKey: string, depth: number, scaling: boolean): void {
  if (depth > 6 || --structuredBudget < 0) return;
  if (typeof value === 'object' && value !== null) {
    for (const name in value) if (Object.hasOwn(value, name)) visitStructured(findings, (value as Record<string, unknown>)[name], name, depth + 1, scaling);
    return;
  }
  if (value !== 0 && value !== '0') return;
  const key = rawKey.toLowerCase().replace(/[^a-z]/g, '');
  if (SCALE_KEY.test(key) && (scaling || SCALE_WORD.test(key))) findings.add(R.scaleToZero);
}

/** Word form of the tool and action type joined, for verbs of unknown tools. */
export function actionWordsOf(tool: string, actionType: string): string {
  return `${canonicalToolName(tool)}_${actionType.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
}

/** Scratch of one call (decide() is synchronous and never re-entered). */
const scratch = new Findings();
const actionWordForm = (actionType: string): string => actionType.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z0-9]+/g, '_');

/**
 * The verbs an unknown tool's call names, as bits (delete 1, write 2,
 * scaling 4), read in the words of its tool and action type. Not
 * remembered here: the caller keeps it per (tool, action type) pair
 * (proposal-views.ts).
 */
export function callVerbs(tool: string, actionType: string): number {
  return verbsOf(`${canonicalToolName(tool)}_${actionWordForm(actionType)}`);
}

/**
 * The version-2 findings of one call's tool and arguments (amounts of money
 * apart: money.ts). `verbs`: {@link callVerbs} of the call (read by unknown
 * tools only). The list is scratch: read it before the next call.
 */
export function callFindings(tool: string, verbs: number, args: unknown, execHint: boolean, kind: ToolKind = toolKind(tool)): readonly number[] {
  scratch.reset();
  findingsOf(scratch, tool, verbs, args, execHint, kind);
  return scratch.list;
}
