export const SUBDOC_COMMANDS: ReadonlyMap<number, import('./classic-commands').Handler> = new Map();
