import type { Collection } from '../collection';
import type { Manifest } from '../document/manifest/manifest';
import type { CommandContext } from './commands/command';
import { CliError } from './error-report';

/**
 * Which collections exist, from the collections manifest. Commands that only read refuse a collection
 * that does not exist (a typo would otherwise read as an empty collection); commands that write create
 * it, as the document layer does.
 */

/** Every collection of the manifest, as `scope.collection`, in the manifest's order. */
export function collectionNames(manifest: Manifest): string[] {
  return manifest.scopes.flatMap((scope) => scope.collections.map((c) => `${scope.name}.${c.name}`));
}

/**
 * The collection the command names, which must exist.
 *
 * @throws CliError naming the collections that do exist.
 */
export async function requireCollection(context: CommandContext): Promise<Collection> {
  const session = await context.session();
  const collection = session.collection(context.collectionName);
  const names = collectionNames(await session.docs.getManifest());
  const name = `${collection.scope}.${collection.name}`;
  if (!names.includes(name)) {
    throw new CliError(`unknown collection ${name} (the collections are: ${names.join(', ') || 'none'})`);
  }
  return collection;
}
