import { resolve } from 'path';
import { checkArity, integerOption, REPEAT_SEPARATOR, stringOption, UsageError } from '../args';
import { createKvServer, type KvServerOptions, type KvUser } from '../../server';
import type { Command } from './command';

export const serveCommand: Command = {
  name: 'serve',
  forms: [
    {
      usage: 'serve [--port 11210] [--host 127.0.0.1] [--user name:password ...] [--bucket name ...]',
      summary: 'serve the database to memcached and Couchbase clients',
    },
  ],
  details: [
    "Speaks the memcached binary protocol with Couchbase's extensions (see docs/server.md): connect a Couchbase SDK",
    'with couchbase://127.0.0.1:11210, or any memcached binary-protocol client. Without --user every client is in',
    'and starts on the bucket "default" (doclayer\'s default database). Runs until interrupted (Ctrl-C, SIGTERM).',
  ],
  options: ['port', 'host', 'path', 'user', 'bucket'],
  createsDatabase: true,
  async run(context) {
    checkArity(context.args, 0, 0, 'serve');
    const port = integerOption(context.args, 'port', 0, 'serve') ?? 11210;
    if (port > 65535) throw new UsageError('--port is at most 65535', 'serve');
    const options: KvServerOptions = {
      port,
      host: stringOption(context.args, 'host') ?? '127.0.0.1',
      users: repeated(context.args.options.get('user')).map(userOf),
    };
    const buckets = repeated(context.args.options.get('bucket'));
    if (buckets.length > 0) options.buckets = buckets;
    const path = stringOption(context.args, 'path');
    const { choice } = context.engine;
    if (path !== undefined) options.path = resolve(context.cwd, path);
    else if (choice.engine === 'lmdb') options.path = choice.path;
    else if (choice.engine === 'fdb') options.fdb = choice.fdb;
    else if (choice.engine === 'memory') options.memory = choice.memory ?? {};
    if (choice.engine === 'lmdb') {
      // --durability and --read-cache-bytes, for the folder of --db or --path alike.
      if (choice.durability !== undefined) options.durability = choice.durability;
      if (choice.readCacheBytes !== undefined) options.readCacheBytes = choice.readCacheBytes;
    }
    const server = await createKvServer(options);
    await context.output.write(`doclayer serving ${[...server.buckets.keys()].join(', ')} on ${server.host}:${server.port}\n`);
    await new Promise<void>((done) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        done();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    await server.close();
  },
};

function repeated(value: string | true | undefined): string[] {
  return typeof value === 'string' ? value.split(REPEAT_SEPARATOR) : [];
}

function userOf(text: string): KvUser {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new UsageError(`--user is name:password, got ${JSON.stringify(text)}`, 'serve');
  return { name: text.slice(0, colon), password: text.slice(colon + 1), admin: true };
}
