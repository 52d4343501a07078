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

/**
 * An option's two forms: its name alone, and a phrase that says it is an option. The library's sentences use
 * either, as reads best (`period 2024-13 is ...`, `deliver again with force`; `name it with the period option`,
 * `the base URL from the baseUrl option`); at the command line both are the flag.
 */
export interface OptionNames {
  /** `period`; the CLI's `--period`. */
  name(option: NamedOption): string;
  /** `the period option`; the CLI's `--period`. */
  phrase(option: NamedOption): string;
}
