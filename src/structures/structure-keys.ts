import type { DocumentKeys } from '../document/keys/layout';

/**
 * Where a structure keeps its data inside its document (see docs/structures.md):
 *
 * ```
 * <docPrefix> 0x00 'k'            kind (kind.ts), written at creation only
 * <docPrefix> 0x00 's' | 'l' | 'b'  counters kept by atomic add: size (set, map), text length in
 *                                 UTF-16 units and in UTF-8 bytes (names allocated in layout.ts)
 * <docPrefix> 0x01                root entry: the structure marker '$' (kind.ts)
 * <docPrefix> 0x01 0x00 ...       the body: everything else
 * ```
 *
 * The body sits under the tuple element `null` (0x00), which no sub-document path can name (paths are
 * tuple strings and integers), so sub-document operations on a structure find nothing below its
 * root and fail on the root's marker.
 */

/** `<root> 0x00`: the key under which a structure's data lives (a container marker for list and map). */
export function bodyKey(keys: DocumentKeys): Buffer {
  return keys.rootDescendants;
}
