/**
 * The doclayer atomic node against a stand-in for Node-RED's node API (the real runtime runs it in
 * test/node-red/runtime.test.ts): which store, scope and key it uses, how it reads its amount, what
 * it puts in msg.payload, and how it reports a failure.
 */
import doclayer = require('../../src/node-red');
import registerAtomicNode, { type AtomicNodeConfig, type NodeMessage, type NodeRedApi, type RuntimeNode } from '../../src/node-red/atomic-node';
import { nodeRedUtil } from './support/node-red-reference';
import { closeStores, get, sharedDatabase } from './support/store-fixture';

type Input = (msg: NodeMessage, send: (msg: NodeMessage) => void, done: (err?: Error) => void) => void;

let store: doclayer.DoclayerContextStore;
let storeConfig: { database: ReturnType<typeof sharedDatabase> };
let contextStorage: NonNullable<NodeRedApi['settings']['contextStorage']>;
const types = new Map<string, (this: RuntimeNode, config: AtomicNodeConfig) => void>();

const RED: NodeRedApi = {
  nodes: {
    createNode(node: object, config: object) {
      const { id, z, _alias } = config as { id: string; z?: string; _alias?: string };
      const handlers: Record<string, Input> = {};
      Object.assign(node, { id, z, _alias, handlers, on: (event: string, handler: Input) => (handlers[event] = handler) });
    },
    registerType(type, constructor) {
      types.set(type, constructor);
    },
  },
  settings: {
    get contextStorage() {
      return contextStorage;
    },
  },
  util: nodeRedUtil,
};

beforeAll(() => registerAtomicNode(RED));

beforeEach(async () => {
  storeConfig = { database: sharedDatabase() };
  contextStorage = { memory: { module: 'memory' }, default: { module: doclayer, config: storeConfig } };
  store = doclayer(storeConfig);
  await store.open();
});

afterEach(async () => {
  await store.close();
  await closeStores();
});

/** Creates a node from `config` and sends it `msg`; resolves with what it sent, or its error. */
function send(config: Partial<AtomicNodeConfig>, msg: NodeMessage = {}): Promise<{ sent?: NodeMessage; err?: Error }> {
  const node = {} as RuntimeNode & { handlers: Record<string, Input> };
  types.get('doclayer-atomic')!.call(node, { id: 'n1', type: 'doclayer-atomic', z: 'f1', ...config });
  return new Promise((resolve) => {
    let sent: NodeMessage | undefined;
    node.handlers.input(
      msg,
      (m) => (sent = m),
      (err) => resolve(err ? { err } : { sent }),
    );
  });
}

describe('doclayer atomic node', () => {
  it('registers the type doclayer-atomic', () => {
    expect([...types.keys()]).toEqual(['doclayer-atomic']);
  });

  it('increments a global key by 1 by default and outputs the new value in msg.payload', async () => {
    expect(await send({ operation: 'incr', scope: 'global', key: 'count' }, { topic: 't' })).toEqual({ sent: { topic: 't', payload: 1 } });
    expect((await send({ operation: 'incr', scope: 'global', key: 'count' })).sent?.payload).toBe(2);
    expect(await get(store, 'global', 'count')).toBe(2);
  });

  it('uses its flow context and its own node context as the runtime scopes them', async () => {
    await send({ operation: 'incr', scope: 'flow', key: 'n', amount: '5', amountType: 'num' });
    await send({ operation: 'decr', scope: 'node', key: 'n', amount: '2', amountType: 'num' });
    await send({ operation: 'incr', scope: 'node', key: 'n', _alias: 'inner' } as Partial<AtomicNodeConfig>);
    expect(await get(store, 'f1', 'n')).toBe(5);
    expect(await get(store, 'n1:f1', 'n')).toBe(-2);
    expect(await get(store, 'inner:f1', 'n')).toBe(1);
  });

  it('takes the key and the amount from the message when told to', async () => {
    const msg = { topic: 'stats.hits', step: 3 };
    const { sent } = await send({ operation: 'incr', key: 'topic', keyType: 'msg', amount: 'step', amountType: 'msg' }, msg);
    expect(sent?.payload).toBe(3);
    expect(await get(store, 'global', 'stats')).toEqual({ hits: 3 });
  });

  it('runs the array and string operations, with the amount as the element or the text', async () => {
    expect((await send({ operation: 'push', key: 'q', amount: '{"id":1}', amountType: 'json' })).sent?.payload).toBe(1);
    expect((await send({ operation: 'unshift', key: 'q', amount: 'first', amountType: 'str' })).sent?.payload).toBe(2);
    expect((await send({ operation: 'pop', key: 'q' })).sent?.payload).toEqual({ id: 1 });
    expect((await send({ operation: 'shift', key: 'q' })).sent?.payload).toBe('first');
    expect((await send({ operation: 'append', key: 's', amount: 'b', amountType: 'str' })).sent?.payload).toBe('b');
    expect((await send({ operation: 'prepend', key: 's', amount: 'a', amountType: 'str' })).sent?.payload).toBe('ab');
  });

  it('reports a failed operation with done(err) and sends nothing', async () => {
    await send({ operation: 'append', key: 's', amount: 'text', amountType: 'str' });
    const { sent, err } = await send({ operation: 'incr', key: 's' });
    expect(sent).toBeUndefined();
    expect(err).toMatchObject({ code: 'NOT_A_NUMBER' });
  });

  it('finds its store by name, following a default that names another entry', async () => {
    contextStorage = { default: 'shared', shared: { module: doclayer, config: storeConfig } };
    expect((await send({ operation: 'incr', key: 'k', store: '' })).sent?.payload).toBe(1);
    expect((await send({ operation: 'incr', key: 'k', store: 'shared' })).sent?.payload).toBe(2);
  });

  it('refuses a store that is not a doclayer store, and an empty key', async () => {
    expect((await send({ operation: 'incr', key: 'k', store: 'memory' })).err).toMatchObject({ code: 'NO_STORE' });
    expect((await send({ operation: 'incr', key: '' })).err).toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
