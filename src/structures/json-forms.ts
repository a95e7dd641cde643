import type { JsonForms } from '../document/keys/kind';
import { counterJsonForm } from './counter';
import { listJsonForm } from './list';
import { mapJsonForm } from './map';
import { queueJsonForm } from './queue/json-form';
import { setJsonForm } from './set';
import { sortedSetJsonForm } from './sorted-set';
import { textJsonForm } from './text';

/**
 * How each structure's document reads as JSON (Couchbase's SDK3 data-structures RFC): what the
 * composition root hands the document layer, so that `get` of a structure returns its JSON form.
 */
export const STRUCTURE_JSON_FORMS: JsonForms = new Map([
  ['list', listJsonForm],
  ['map', mapJsonForm],
  ['set', setJsonForm],
  ['queue', queueJsonForm],
  ['counter', counterJsonForm],
  ['text', textJsonForm],
  ['sortedset', sortedSetJsonForm],
]);
