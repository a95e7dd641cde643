// The doclayer atomic node, registered by the "node-red" field of doclayer's package.json. Its code is
// src/node-red/atomic-node.ts, compiled into dist/ by `npm run build`; its editor is doclayer-atomic.html.
module.exports = require('../dist/node-red/atomic-node').default;
