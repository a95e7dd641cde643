/**
 * Bad arguments that used to slip through as untyped errors, the wrong code, or silently: each is now
 * a typed error, raised before anything is written.
 */
import { KvError, MutateInSpec, open, type Transaction } from '../../src';
import { dumpKeyspace, expectDocumentError } from '../support/document-assertions';

describe('typed errors for bad arguments', () => {
  it('a CAS that no write can have returned is INVALID_ARGUMENT, not CAS_MISMATCH', async () => {
    const docs = await open();
    const users = docs.collection('users');
    const { cas } = await users.upsert('a', { n: 1 });
    const before = await dumpKeyspace(docs.kv);
    for (const bad of ['zzzz', '', `${cas}0`, 'g'.repeat(20)]) {
      await expectDocumentError(users.mutateIn('a', [MutateInSpec.upsert('n', 2)], { cas: bad }), 'INVALID_ARGUMENT');
      await expectDocumentError(users.replace('a', { n: 2 }, { cas: bad }), 'INVALID_ARGUMENT');
      await expectDocumentError(users.remove('a', { cas: bad }), 'INVALID_ARGUMENT');
    }
    expect(await dumpKeyspace(docs.kv)).toEqual(before);
    // A well-formed CAS of another version is still a mismatch, and the right one (in any case) matches.
    await expectDocumentError(users.replace('a', { n: 2 }, { cas: '0'.repeat(20) }), 'CAS_MISMATCH');
    await users.replace('a', { n: 3 }, { cas: (cas as string).toUpperCase() });
    expect((await users.get('a')).content).toEqual({ n: 3 });
    await docs.close();
  });

  it('an id of null is INVALID_ARGUMENT, not a generated id', async () => {
    const docs = await open();
    const users = docs.collection('users');
    await expectDocumentError(users.insert({ n: 1 }, { id: null as unknown as string }), 'INVALID_ARGUMENT');
    expect(await dumpKeyspace(docs.kv)).toEqual([]);
    await docs.close();
  });

  it('a tr that is not a transaction is a KvError invalid_option_value, with nothing written', async () => {
    const docs = await open();
    const users = docs.collection('users');
    const notATransaction = {} as Transaction;
    const attempts: (() => Promise<unknown>)[] = [
      () => users.upsert('a', { n: 1 }, { tr: notATransaction }),
      () => users.get('a', { tr: notATransaction }),
      () => users.mutateIn('a', [MutateInSpec.upsert('n', 1)], { tr: notATransaction }),
      () => users.set('s').add(1, { tr: notATransaction }),
      () => docs.transact(async () => undefined, { tr: notATransaction }),
    ];
    for (const attempt of attempts) {
      const err = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(KvError);
      expect(err).toMatchObject({ code: 2006 });
    }
    expect(await dumpKeyspace(docs.kv)).toEqual([]);
    await docs.close();
  });
});
