import { resolve } from 'node:path';
import { expand, formatArchiveEntry } from '../../archive/expand.js';
import { createSqliteArchive } from '../../archive/sqlite-archive.js';
import { PrecisError } from '../../errors/index.js';
import type { CliIo } from '../cli-io.js';
import { parseOptions } from '../parse-options.js';
import { defaultStorePath } from './compress.js';

/**
 * `precis expand <handle>`: prints the original that `precis compress` archived under the handle, from the
 * SQLite archive (`.precis/archive.db` in the working directory, `--store PATH`), opened read-only.
 * `--json` prints the whole archive entry as JSON. An index (a summary's handle) lists the originals it names.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    store: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [handle, ...extra] = positionals;
  if (handle === undefined || extra.length > 0)
    throw new PrecisError('invalid-argument', 'expand takes exactly one handle (h-…)');
  const archive = createSqliteArchive({ path: resolve(values.store ?? defaultStorePath), readonly: true });
  try {
    const entry = expand(archive, handle);
    io.stdout(
      values.json === true
        ? `${JSON.stringify(entry, null, 2)}\n`
        : `${formatArchiveEntry(entry, archive)}\n`,
    );
  } finally {
    archive.close();
  }
  return 0;
}
