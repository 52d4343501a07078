// bds completion: shell completion scripts generated from the commander definitions, so they never drift.

import type { Command } from 'commander';
import { UsageError } from '../errors.js';

interface CommandSpec {
  name: string;
  description: string;
  flags: Array<{ names: string[]; description: string; takesValue: boolean; choices: string[] }>;
}

function specs(program: Command): CommandSpec[] {
  return program.commands.map((command) => ({
    name: command.name(),
    description: command.description(),
    flags: [...command.options, command.createHelp().visibleOptions(command).find((o) => o.long === '--help')]
      .filter((o, i, all): o is NonNullable<typeof o> => o !== undefined && all.findIndex((x) => x?.flags === o.flags) === i)
      .map((option) => ({
        names: [option.short, option.long].filter((n): n is string => Boolean(n)),
        description: option.description,
        takesValue: option.required || option.optional,
        choices: option.argChoices ?? [],
      })),
  }));
}

export function completionScript(program: Command, shell: string): string {
  const commands = specs(program);
  if (shell === 'bash') return bash(commands);
  if (shell === 'zsh') return zsh(commands);
  if (shell === 'fish') return fish(commands);
  throw new UsageError(`no completion for the shell "${shell}"`, { hint: 'choose bash, zsh or fish' });
}

const quote = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`;

function bash(commands: CommandSpec[]): string {
  const cases = commands
    .map((c) => {
      const valued = c.flags.filter((f) => f.takesValue);
      const choiceCases = valued
        .filter((f) => f.choices.length)
        .map((f) => `        ${f.names.join('|')}) COMPREPLY=($(compgen -W ${quote(f.choices.join(' '))} -- "$cur")); return ;;`);
      const fileCases = valued
        .filter((f) => !f.choices.length)
        .map((f) => `        ${f.names.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`);
      return [
        `    ${c.name})`,
        '      case "$prev" in',
        ...choiceCases,
        ...fileCases,
        '      esac',
        `      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W ${quote(c.flags.flatMap((f) => f.names).join(' '))} -- "$cur"));`,
        c.name === 'completion'
          ? `      else COMPREPLY=($(compgen -W 'bash zsh fish' -- "$cur")); fi ;;`
          : '      else COMPREPLY=($(compgen -d -- "$cur")); fi ;;',
      ].join('\n');
    })
    .join('\n');
  return `# bash completion for bds; load with: source <(bds completion bash)
_bds() {
  local cur prev cmd
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmd="\${COMP_WORDS[1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${quote([...commands.map((c) => c.name), '--help', '--version'].join(' '))} -- "$cur"))
    return
  fi
  case "$cmd" in
${cases}
  esac
}
complete -o filenames -F _bds bds
`;
}

function zsh(commands: CommandSpec[]): string {
  const escape = (text: string): string => text.replace(/[[\]:']/g, (ch) => `\\${ch}`);
  const functions = commands
    .map((c) => {
      const specsLines = c.flags.map((f) => {
        const names = f.names.length > 1 ? `(${f.names.join(' ')})'{${f.names.join(',')}}'` : f.names[0]!;
        const value = f.takesValue ? (f.choices.length ? `:value:(${f.choices.join(' ')})` : ':value:_files') : '';
        return `    '${names}[${escape(f.description)}]${value}'`;
      });
      const positional = c.name === 'completion' ? "    '1:shell:(bash zsh fish)'" : c.name === 'deliver' ? "    '1:folder:_directories'" : '';
      return [`_bds_${c.name.replace(/-/g, '_')}() {`, '  _arguments \\', [...specsLines, positional].filter(Boolean).join(' \\\n'), '}'].join('\n');
    })
    .join('\n\n');
  return `#compdef bds
# zsh completion for bds; load with: source <(bds completion zsh)

${functions}

_bds() {
  local -a commands
  commands=(
${commands.map((c) => `    '${c.name}:${escape(c.description)}'`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd="\${words[2]}"
  shift words
  (( CURRENT-- ))
  case "$cmd" in
${commands.map((c) => `    ${c.name}) _bds_${c.name.replace(/-/g, '_')} ;;`).join('\n')}
  esac
}

if [[ "$funcstack[1]" == "_bds" ]]; then _bds "$@"; else compdef _bds bds; fi
`;
}

function fish(commands: CommandSpec[]): string {
  const lines = [
    '# fish completion for bds; load with: bds completion fish | source',
    'complete -c bds -f',
    ...commands.map(
      (c) => `complete -c bds -n '__fish_use_subcommand' -a ${c.name} -d ${quote(c.description)}`,
    ),
    "complete -c bds -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'",
    "complete -c bds -n '__fish_seen_subcommand_from deliver' -F",
  ];
  for (const c of commands) {
    for (const f of c.flags) {
      const long = f.names.find((n) => n.startsWith('--'))?.slice(2);
      const short = f.names.find((n) => !n.startsWith('--'))?.slice(1);
      const parts = [
        `complete -c bds -n '__fish_seen_subcommand_from ${c.name}'`,
        long ? `-l ${long}` : '',
        short ? `-s ${short}` : '',
        f.takesValue ? (f.choices.length ? `-x -a ${quote(f.choices.join(' '))}` : '-r -F') : '',
        `-d ${quote(f.description)}`,
      ];
      lines.push(parts.filter(Boolean).join(' '));
    }
  }
  return `${lines.join('\n')}\n`;
}
