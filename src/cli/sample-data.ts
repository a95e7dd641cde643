import type { JsonObject } from '../document/types';
import { seededRandom } from '../kv/engine-parts/seeded-random';

/**
 * The sample data set of the demo and of `scripts/generate-sample.ts`: orders of an online shop, as
 * nested documents of the shape applications store (a customer with an address, line items, payment,
 * shipping, a status history, tags), about 50 keys each in the store.
 *
 * It is generated, not shipped: a seeded generator gives the same documents, byte for byte, on every
 * machine and run, so the package carries a few kilobytes of code instead of megabytes of data, and
 * the demo's output is the same everywhere. Object keys are written in sorted order, as the document
 * layer returns them, so an export of an import of this data equals it.
 */

export const SAMPLE_SEED = 20240917;
export const SAMPLE_SIZE = 3000;

const FIRST = [
  'Ada',
  'Alan',
  'Grace',
  'Edsger',
  'Barbara',
  'Donald',
  'Frances',
  'John',
  'Margaret',
  'Ken',
  'Radia',
  'Tim',
  'Leslie',
  'Sophie',
  'Linus',
  'Hedy',
  'Niklaus',
  'Karen',
  'Dennis',
  'Shafi',
];
const LAST = [
  'Lovelace',
  'Turing',
  'Hopper',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'McCarthy',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Berners-Lee',
  'Lamport',
  'Wilson',
  'Torvalds',
  'Lamarr',
  'Wirth',
  'Spärck Jones',
  'Ritchie',
  'Goldwasser',
];
const CITIES: [string, string, string][] = [
  ['London', 'GB', 'N1 7AA'],
  ['Paris', 'FR', '75011'],
  ['Berlin', 'DE', '10115'],
  ['Lyon', 'FR', '69002'],
  ['Amsterdam', 'NL', '1012 AB'],
  ['Zürich', 'CH', '8001'],
  ['Lisbon', 'PT', '1100-148'],
  ['Kraków', 'PL', '31-042'],
  ['Boston', 'US', '02108'],
  ['Montréal', 'CA', 'H2Y 1C6'],
  ['Kyoto', 'JP', '600-8216'],
  ['Melbourne', 'AU', '3000'],
];
const STREETS = [
  'Mill Lane',
  'Rue Oberkampf',
  'Torstraße',
  'Quai Saint-Antoine',
  'Prinsengracht',
  'Bahnhofstrasse',
  'Rua Augusta',
  'Floriańska',
  'Beacon Street',
  'Rue Saint-Paul',
  'Shijō-dōri',
  'Collins Street',
];
const PRODUCTS: [string, string, number][] = [
  ['BEAN-1KG', 'Espresso beans, 1 kg', 18.5],
  ['GRND-250', 'Filter grind, 250 g', 7.9],
  ['MUG-CRM', 'Ceramic mug', 12],
  ['KTL-GS', 'Gooseneck kettle', 64],
  ['SCL-01', 'Coffee scale', 39.99],
  ['FLT-100', 'Paper filters, 100', 4.5],
  ['DRP-V60', 'Pour-over dripper', 24],
  ['GRN-HND', 'Hand grinder', 89],
  ['TEA-SNC', 'Sencha tea, 100 g', 11.25],
  ['CUP-SET', 'Espresso cups, set of 4', 29],
  ['SYR-VAN', 'Vanilla syrup', 8.75],
  ['BAG-TOTE', 'Canvas tote', 15],
];
const STATUSES = ['placed', 'paid', 'packed', 'shipped', 'delivered'] as const;
const CARRIERS = ['DHL', 'UPS', 'La Poste', 'Royal Mail', 'PostNL', 'USPS'];
const TAGS = ['gift', 'express', 'first-order', 'subscription', 'wholesale', 'fragile', 'eco-packaging'];
const BRANDS = ['visa', 'mastercard', 'amex'];

/** The id of the `n`th order (from 1): `order-00042`. Ids sort in order. */
export function sampleOrderId(n: number): string {
  return `order-${String(n).padStart(5, '0')}`;
}

/** The `count` orders of the sample, in id order. */
export function* sampleOrders(count = SAMPLE_SIZE, seed = SAMPLE_SEED): Generator<JsonObject> {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const start = Date.UTC(2024, 0, 1);
  for (let n = 1; n <= count; n++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const [city, country, zip] = pick(CITIES);
    const placed = start + Math.floor(random() * 300 * 86_400_000);
    const items = Array.from({ length: int(1, 5) }, () => {
      const [sku, name, price] = pick(PRODUCTS);
      return { name, price, qty: int(1, 3), sku };
    });
    const total = Math.round(items.reduce((sum, item) => sum + item.price * item.qty, 0) * 100) / 100;
    const reached = int(0, STATUSES.length - 1);
    const history = STATUSES.slice(0, reached + 1).map((status, i) => ({
      at: new Date(placed + i * int(2, 30) * 3_600_000).toISOString(),
      status,
    }));
    const paid = reached >= 1;
    const shipped = reached >= 3;
    yield {
      customer: {
        address: { city, country, street: `${int(1, 220)} ${pick(STREETS)}`, zip },
        email: `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '') + '@example.com',
        id: `cust-${String(int(1, 800)).padStart(4, '0')}`,
        name: `${first} ${last}`,
      },
      history,
      id: sampleOrderId(n),
      items,
      payment: paid
        ? { card: { brand: pick(BRANDS), last4: String(int(0, 9999)).padStart(4, '0') }, currency: 'EUR', method: 'card', total }
        : { currency: 'EUR', method: 'pending', total },
      placedAt: new Date(placed).toISOString(),
      shipping: {
        carrier: pick(CARRIERS),
        estimate: { days: int(1, 7) },
        tracking: shipped ? `TRK${int(100_000_000, 999_999_999)}` : null,
      },
      status: STATUSES[reached],
      tags: TAGS.filter(() => random() < 0.15),
    };
  }
}
