#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { runCli } from './run-cli.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
