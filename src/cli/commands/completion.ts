/**
 * `edgectl completion bash|zsh|fish`: a shell completion script generated from the command tree itself, so it
 * always matches the commands and options this build has. Each shell walks the words typed so far to find the
 * command path, then offers that command's subcommands and long options (option values are not completed).
 */
import { Argument, type Command } from 'commander';
import type { CliIo } from '../io.js';

/** Every command path (space-separated, '' for the program) with the words that may follow it. */
function table(program: Command): [string, string[]][] {
  const out: [string, string[]][] = [];
  const walk = (cmd: Command, path: string) => {
    const words = [
      ...cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]),
      ...cmd.options.map((o) => o.long).filter((l): l is string => l !== undefined),
      '--help',
    ];
    out.push([path, [...new Set(words)]]);
    for (const c of cmd.commands)
      for (const name of [c.name(), ...c.aliases()]) walk(c, path === '' ? name : `${path} ${name}`);
  };
  walk(program, '');
  return out;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(program: Command): string {
  const cases = table(program)
    .map(([path, words]) => `    ${quote(path)}) echo ${quote(words.join(' '))} ;;`)
    .join('\n');
  return `# edgectl completion for bash: source <(edgectl completion bash)
_edgectl_words() {
  case "$1" in
${cases}
  esac
}
_edgectl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i next
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    next="\${path:+$path }$w"
    [[ " $(_edgectl_words "$path") " == *" $w "* ]] && path="$next"
  done
  COMPREPLY=($(compgen -W "$(_edgectl_words "$path")" -- "$cur"))
}
complete -F _edgectl edgectl
`;
}

function fish(program: Command): string {
  const cases = table(program)
    .map(([path, words]) => `    case ${quote(path)}\n        printf '%s\\n' ${words.map(quote).join(' ')}`)
    .join('\n');
  return `# edgectl completion for fish: edgectl completion fish | source
function __edgectl_words
    switch "$argv[1]"
${cases}
    end
end
function __edgectl_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l path ''
    for w in $words
        string match -q -- '-*' $w; and continue
        if contains -- $w (__edgectl_words "$path")
            if test -z "$path"
                set path $w
            else
                set path "$path $w"
            end
        end
    end
    __edgectl_words "$path"
end
complete -c edgectl -f -a '(__edgectl_complete)'
`;
}

export function registerCompletion(program: Command, io: CliIo): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
Examples:
  source <(edgectl completion bash)                       # bash, e.g. in ~/.bashrc
  source <(edgectl completion zsh)                        # zsh, e.g. in ~/.zshrc
  edgectl completion fish > ~/.config/fish/completions/edgectl.fish`,
    )
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      if (shell === 'fish') io.out(fish(program));
      // zsh runs the bash script through its bash-completion emulation.
      else if (shell === 'zsh')
        io.out(
          `# edgectl completion for zsh: source <(edgectl completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bash(program)}`,
        );
      else io.out(bash(program));
    });
}
