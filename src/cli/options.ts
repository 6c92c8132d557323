// The configuration's options (src/config.ts OPTIONS) as commander options, and a command's parsed
// options back into a Config: `serve` takes them all, the other commands the few they use.
import { Option } from 'commander';
import {
  type Config,
  type ConfigInput,
  type ConfigOption,
  helpText,
  loadConfig,
  OPTIONS,
} from '../config.ts';

/**
 * The option `k` as the table declares it; `help`: the command's own wording of what it does there
 * (the default and the environment variable are added to it all the same).
 */
export function configOption(k: ConfigOption, help?: string): Option {
  return new Option(OPTIONS[k].flag, helpText(k, help));
}

/** Every option, in the table's order: `serve`'s. */
export function allConfigOptions(): Option[] {
  return (Object.keys(OPTIONS) as ConfigOption[]).map((k) => configOption(k));
}

/**
 * The configuration from a command's parsed options and the process's environment. `uses`: the
 * options the command reads (src/config.ts loadConfig); unset: all (serve).
 */
export function configFrom(opts: Record<string, unknown>, uses?: readonly ConfigOption[]): Config {
  const flags: ConfigInput = {};
  for (const k of Object.keys(OPTIONS) as ConfigOption[]) {
    const v = opts[k];
    if (v !== undefined) flags[k] = v as string | number | boolean;
  }
  return loadConfig(flags, process.env, uses);
}
