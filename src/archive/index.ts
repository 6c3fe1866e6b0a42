export {
  type ArchiveEntry,
  type ArchiveStore,
  archiveHandle,
  archiveKinds,
  createMemoryArchive,
  putIndex,
} from './archive-store.js';
export {
  checkExpandToolOptions,
  type ExpandToolOptions,
  executeExpandTool,
  expand,
  expandTool,
  formatArchiveEntry,
} from './expand.js';
export {
  type ArchiveEntrySummary,
  type ArchiveListOptions,
  type ArchiveListOrder,
  archiveListOrders,
  createSqliteArchive,
  type SqliteArchive,
  type SqliteArchiveOptions,
} from './sqlite-archive.js';
