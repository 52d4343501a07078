// How a door names the options a caller gives, the one way an option is worded in a message. The core has no
// words for options: the door a call came through hands in its names (the library's in core/options.ts, the
// CLI's flags in src/cli/output/error-words.ts), and every message that names an option takes them from here.

/** The options the core's messages can name, by their library names. */
export type NamedOption =
  | 'apiKey'
  | 'baseUrl'
  | 'sourceId'
  | 'profile'
  | 'config'
  | 'pingUrl'
  | 'metricsFile'
  | 'limitRate'
  | 'period'
  | 'since'
  | 'until'
  | 'product'
  | 'file'
  | 'jobs'
  | 'timeout'
  | 'failOn'
  | 'wait'
  | 'dryRun'
  | 'force'
  | 'skipDelivered';

export interface OptionNames {
  /** The option as what a message is about: `period 2024-13 is not ...` (the CLI: `--period 2024-13 ...`). */
  subject(option: NamedOption): string;
  /** The option after a verb or "from": `name it with the period option` (the CLI: `with --period`). */
  reference(option: NamedOption): string;
}
