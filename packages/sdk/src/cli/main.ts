#!/usr/bin/env node
/**
 * `automation` — the Automation Service from the command line, through its API only (a stored
 * API key or a signed-in user). `automation --help` lists the commands; every command takes
 * `--json` for scripts.
 */
import { Command, Option } from 'commander';
import { registerAccountCommands } from './accounts.ts';
import { registerWorkCommands } from './work.ts';
import { reportError } from './context.ts';

export function program(): Command {
  const cli = new Command('automation')
    .description('The Automation Service API from the command line (server URL and credentials: `automation login` or `automation config set`)')
    .addOption(new Option('--url <url>', 'server URL, e.g. https://automation.example.com').env('AUTOMATION_URL'))
    .addOption(new Option('--api-key <key>', 'API key (instead of a signed-in session)').env('AUTOMATION_API_KEY'))
    .addOption(new Option('--org <orgId>', 'organization to act on (default: the stored one, else your first)').env('AUTOMATION_ORG'))
    .option('--json', 'print JSON (for scripts) instead of text')
    .showHelpAfterError()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  registerAccountCommands(cli);
  registerWorkCommands(cli);
  return cli;
}

export async function run(argv: string[]): Promise<number> {
  const cli = program();
  cli.exitOverride();
  try {
    await cli.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('commander.')) {
      // help and version exit 0; usage errors were printed by commander
      return code === 'commander.helpDisplayed' || code === 'commander.help' || code === 'commander.version' ? 0 : 2;
    }
    return reportError(error, argv.includes('--json'));
  }
}

const invoked = process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL((await import('node:fs')).realpathSync(process.argv[1])).href;
if (invoked) process.exitCode = await run(process.argv.slice(2));
