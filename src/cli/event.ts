// `helixd event trigger <type>`: an EventSub event made by writing its change to the store
// (src/eventsub/trigger.ts), as POST /admin/eventsub/trigger makes it. A running helixd on the same
// store finds the event in its outbox and delivers it to its subscribers, whichever process serves
// them.
import type { Command } from 'commander';
import { clockFor, nowSeconds } from '../clock.ts';
import { type CliIo, UsageError, withStore } from './common.ts';
import { configFrom, configOption } from './options.ts';

export function eventCommand(program: Command, io: CliIo): void {
  const event = program.command('event').description('EventSub events on demand');
  event
    .command('trigger')
    .description('make an event by writing the change that causes it (a channel.follow writes a follow)')
    .argument('<type>', 'the subscription type, e.g. stream.online, channel.follow, user.update')
    .addOption(configOption('db'))
    .option('--broadcaster <id>', 'the channel (every stream.* and channel.* type)')
    .option('--user <id>', 'the follower, subscriber, moderator or updated user; drawn when left out')
    .option('--tier <tier>', "a subscription's tier: 1000, 2000 or 3000", '1000')
    .option('--gifter <id>', 'channel.subscription.gift: the giver (left out: anonymous)')
    .option('--count <n>', 'channel.subscription.gift: how many subscriptions are given', '1')
    .option('--description <text>', 'user.update: the new description')
    .option('--title <text>', "channel.update: the channel's new title")
    .addOption(configOption('now', 'the instant of the change, default the system clock'))
    .option('--json', 'print what was written or deleted as JSON')
    .action(async (type: string, opts) => {
      const config = configFrom(opts, ['db', 'now']);
      const count = Number(opts.count);
      const { trigger, triggerInput } = await import('../eventsub/trigger.ts');
      const { HelixError } = await import('../http/errors.ts');
      let input: ReturnType<typeof triggerInput>;
      try {
        input = triggerInput({
          type,
          ...(opts.broadcaster !== undefined ? { broadcaster_id: opts.broadcaster } : {}),
          ...(opts.user !== undefined ? { user_id: opts.user } : {}),
          tier: opts.tier,
          ...(opts.gifter !== undefined ? { gifter_id: opts.gifter } : {}),
          count,
          ...(opts.description !== undefined ? { description: opts.description } : {}),
          ...(opts.title !== undefined ? { title: opts.title } : {}),
        });
      } catch (err) {
        throw new UsageError(optionNames((err as Error).message));
      }
      await withStore(config, async (store) => {
        try {
          const result = await trigger(store, input, nowSeconds(clockFor(config)));
          if (opts.json) io.stdout.write(`${JSON.stringify(result)}\n`);
          else {
            for (const w of result.written) io.stdout.write(`wrote ${w.kind} ${JSON.stringify(w.data)}\n`);
            for (const d of result.deleted) io.stdout.write(`deleted ${d.kind} ${d.key.join(' ')}\n`);
          }
        } catch (err) {
          if (err instanceof HelixError) throw new UsageError(`${type}: ${optionNames(err.message)}`);
          throw err;
        }
      });
    });
}

/** A trigger's message with its fields named as this command's options. */
const optionNames = (message: string): string =>
  message
    .replace(/^broadcaster_id:/, '--broadcaster:')
    .replace(/^user_id:/, '--user:')
    .replace(/^gifter_id:/, '--gifter:')
    .replace(/^type:/, '<type>:')
    .replace(/^(tier|count|description|title):/, '--$1:');
