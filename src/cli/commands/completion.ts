// bds completion: shell completion scripts generated from the commander definitions, so they never drift.

import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { defineCommand } from '../command.js';
import type { CommonFlags } from '../command.js';

const SHELLS = ['bash', 'zsh', 'fish', 'powershell'];

export default defineCommand<CommonFlags, { shell: string; script: string }>({
  name: 'completion',
  description: 'print a shell completion script (bash, zsh, fish or powershell)',
  arguments: [{ syntax: '<shell>', description: 'bash, zsh, fish or powershell', choices: SHELLS }],
  async run(_op, _io, _flags, [shell], program) {
    return { shell: String(shell), script: completionScript(program, String(shell)) };
  },
  print(io, { shell, script }) {
    io.result({ shell, script }, () => script);
  },
});

interface CompletedOption {
  names: string[];
  description: string;
  /** What follows the option: nothing, a file name (a `<path>` value), or anything else, which has no completion. */
  value: 'none' | 'path' | 'text';
  /** The value's name in the definition (`<YYYY-MM>` is YYYY-MM). */
  placeholder: string;
  choices: string[];
}

/** A command as the completion scripts need it (not the CLI's CommandSpec). */
interface CompletedCommand {
  name: string;
  description: string;
  options: CompletedOption[];
  /** The first argument: a folder, one of a few words, or none. */
  argument: 'directory' | string[] | undefined;
}

function specs(program: Command): CompletedCommand[] {
  return program.commands.map((command) => {
    const help = command
      .createHelp()
      .visibleOptions(command)
      .find((o) => o.long === '--help');
    const options = help && !command.options.includes(help) ? [...command.options, help] : command.options;
    const first = command.registeredArguments[0];
    return {
      name: command.name(),
      description: command.description(),
      options: options.map((option) => {
        const placeholder = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? '';
        return {
          names: [option.short, option.long].filter((n): n is string => Boolean(n)),
          description: option.description,
          value: !(option.required || option.optional) ? 'none' : placeholder === 'path' ? 'path' : 'text',
          placeholder,
          choices: option.argChoices ?? [],
        };
      }),
      // An argument is one of its choices, or else a folder (deliver's and check's <dir...>).
      argument: first ? (first.argChoices ?? 'directory') : undefined,
    };
  });
}

export function completionScript(program: Command, shell: string): string {
  const commands = specs(program);
  if (shell === 'bash') return bash(commands);
  if (shell === 'zsh') return zsh(commands);
  if (shell === 'fish') return fish(commands);
  if (shell === 'powershell') return powershell(commands);
  throw new UsageError(`no completion for the shell "${shell}"`, { hint: 'choose bash, zsh, fish or powershell' });
}

/** Single quotes for bash, zsh and fish alike. */
const quote = (text: string): string => `'${text.replace(/'/g, "'\\''")}'`;

function bash(commands: CompletedCommand[]): string {
  const cases = commands
    .map((c) => {
      const valued = c.options.filter((o) => o.value !== 'none');
      const names = (options: CompletedOption[]): string => options.flatMap((o) => o.names).join('|');
      const choices = valued
        .filter((o) => o.choices.length)
        .map(
          (o) => `        ${names([o])}) COMPREPLY=($(compgen -W ${quote(o.choices.join(' '))} -- "$cur")); return ;;`,
        );
      const paths = valued.filter((o) => !o.choices.length && o.value === 'path');
      const texts = valued.filter((o) => !o.choices.length && o.value === 'text');
      const argument =
        c.argument === 'directory'
          ? 'COMPREPLY=($(compgen -d -- "$cur"))'
          : c.argument
            ? `COMPREPLY=($(compgen -W ${quote(c.argument.join(' '))} -- "$cur"))`
            : 'COMPREPLY=()';
      return [
        `    ${c.name})`,
        '      case "$prev" in',
        ...choices,
        ...(paths.length ? [`        ${names(paths)}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`] : []),
        ...(texts.length ? [`        ${names(texts)}) COMPREPLY=(); return ;;`] : []),
        '      esac',
        `      if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W ${quote(c.options.flatMap((o) => o.names).join(' '))} -- "$cur"))`,
        `      else ${argument}; fi ;;`,
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

function zsh(commands: CompletedCommand[]): string {
  // _arguments reads [ ] and \ in an explanation as its own syntax.
  const explain = (text: string): string => text.replace(/[[\]\\]/g, '\\$&');
  const fn = (c: CompletedCommand): string => `_bds_${c.name.replace(/-/g, '_')}`;
  const functions = commands
    .map((c) => {
      const lines = c.options.map((o) => {
        const value =
          o.value === 'none'
            ? ''
            : o.choices.length
              ? `:${o.placeholder}:(${o.choices.join(' ')})`
              : o.value === 'path'
                ? `:${o.placeholder}:_files`
                : `:${o.placeholder}: `;
        const spec = quote(`[${explain(o.description)}]${value}`);
        // Either name of a pair excludes the other: '(-q --quiet)'{-q,--quiet}'[...]'.
        return o.names.length > 1
          ? `    ${quote(`(${o.names.join(' ')})`)}{${o.names.join(',')}}${spec}`
          : `    ${quote(o.names[0]!)}${spec}`;
      });
      if (c.argument === 'directory') lines.push(`    ${quote('1:folder:_directories')}`);
      else if (c.argument) lines.push(`    ${quote(`1:value:(${c.argument.join(' ')})`)}`);
      return [`${fn(c)}() {`, '  _arguments \\', lines.join(' \\\n'), '}'].join('\n');
    })
    .join('\n\n');
  return `#compdef bds
# zsh completion for bds; load with: source <(bds completion zsh)

${functions}

_bds() {
  local -a commands
  commands=(
${commands.map((c) => `    ${quote(`${c.name}:${c.description}`)}`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  local cmd="\${words[2]}"
  shift words
  (( CURRENT-- ))
  case "$cmd" in
${commands.map((c) => `    ${c.name}) ${fn(c)} ;;`).join('\n')}
  esac
}

if [[ "$funcstack[1]" == "_bds" ]]; then _bds "$@"; else compdef _bds bds; fi
`;
}

function fish(commands: CompletedCommand[]): string {
  const lines = [
    '# fish completion for bds; load with: bds completion fish | source',
    'complete -c bds -f',
    ...commands.map((c) => `complete -c bds -n '__fish_use_subcommand' -a ${c.name} -d ${quote(c.description)}`),
  ];
  for (const c of commands) {
    const when = `complete -c bds -n '__fish_seen_subcommand_from ${c.name}'`;
    if (c.argument === 'directory') lines.push(`${when} -x -a '(__fish_complete_directories)'`);
    else if (c.argument) lines.push(`${when} -x -a ${quote(c.argument.join(' '))}`);
    for (const o of c.options) {
      const long = o.names.find((n) => n.startsWith('--'))?.slice(2);
      const short = o.names.find((n) => !n.startsWith('--'))?.slice(1);
      const value =
        o.value === 'none'
          ? ''
          : o.choices.length
            ? `-x -a ${quote(o.choices.join(' '))}`
            : o.value === 'path'
              ? '-r -F'
              : '-x';
      lines.push(
        [when, long ? `-l ${long}` : '', short ? `-s ${short}` : '', value, `-d ${quote(o.description)}`]
          .filter(Boolean)
          .join(' '),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A native argument completer: the commands and their options as data, and the words before the cursor read
 * against them. Where it offers nothing (a path, a folder, any value without choices) PowerShell completes
 * file names.
 */
function powershell(commands: CompletedCommand[]): string {
  const text = (value: string): string => `'${value.replace(/'/g, "''")}'`;
  const list = (values: string[]): string => `@(${values.map(text).join(', ')})`;
  const table = commands
    .map((c) => {
      const argument = c.argument === 'directory' ? text('directory') : c.argument ? list(c.argument) : '$null';
      const options = c.options.map(
        (o) =>
          `        @{ Names = ${list(o.names)}; Value = ${text(o.value)}; Choices = ${list(o.choices)}; Description = ${text(o.description)} }`,
      );
      return [
        `    ${text(c.name)} = @{`,
        `      Description = ${text(c.description)}`,
        `      Argument = ${argument}`,
        '      Options = @(',
        options.join('\n'),
        '      )',
        '    }',
      ].join('\n');
    })
    .join('\n');
  return `# PowerShell completion for bds; load with: bds completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName 'bds', 'bds.exe' -ScriptBlock {
  param($wordToComplete, $commandAst, $cursorPosition)
  $bdsCommands = [ordered]@{
${table}
  }
  $result = {
    param($word, $kind, $tip)
    [System.Management.Automation.CompletionResult]::new($word, $word, $kind, $tip)
  }
  # The words before the one being completed.
  $words = @($commandAst.CommandElements | Where-Object { $_.Extent.StartOffset -lt $cursorPosition } | ForEach-Object { $_.Extent.Text })
  if ($wordToComplete -ne '') { $words = @($words | Select-Object -SkipLast 1) }
  if ($words.Count -le 1) {
    foreach ($name in $bdsCommands.Keys) {
      if ($name -like "$wordToComplete*") { & $result $name 'Command' $bdsCommands[$name].Description }
    }
    foreach ($flag in '--help', '--version') {
      if ($flag -like "$wordToComplete*") { & $result $flag 'ParameterName' $flag }
    }
    return
  }
  $command = $bdsCommands[$words[1]]
  if ($null -eq $command) { return }
  $previous = $command.Options | Where-Object { $_.Names -contains $words[-1] -and $_.Value -ne 'none' }
  if ($previous) {
    foreach ($choice in $previous.Choices) {
      if ($choice -like "$wordToComplete*") { & $result $choice 'ParameterValue' $choice }
    }
    return
  }
  if ($wordToComplete -like '-*') {
    foreach ($option in $command.Options) {
      foreach ($name in $option.Names) {
        if ($name -like "$wordToComplete*") { & $result $name 'ParameterName' $option.Description }
      }
    }
    return
  }
  if ($command.Argument -is [array]) {
    foreach ($choice in $command.Argument) {
      if ($choice -like "$wordToComplete*") { & $result $choice 'ParameterValue' $choice }
    }
  }
}
`;
}
