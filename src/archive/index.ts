export { type ArchiveEntry, type ArchiveStore, archiveHandle, createMemoryArchive } from './archive-store.js';
export { executeExpandTool, expand, expandTool, formatArchiveEntry } from './expand.js';
export {
  type ArchiveEntrySummary,
  type ArchiveListOptions,
  type ArchiveListOrder,
  archiveListOrders,
  createSqliteArchive,
  type SqliteArchive,
  type SqliteArchiveOptions,
} from './sqlite-archive.js';
