import { PrecisError } from '../../errors/index.js';
import { type InspectReport, inspectConversation } from '../../inspect/inspect-conversation.js';
import { providers } from '../../messages/provider.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { CliIo } from '../cli-io.js';
import { formatInteger, formatPercent, formatTable } from '../format-table.js';
import { oneOf, parseOptions, positiveInteger } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';

/** `precis inspect <file>`: where the tokens of a transcript go, as tables or `--json`. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    provider: { type: 'string' },
    top: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0)
    throw new PrecisError('invalid-argument', 'inspect takes exactly one input file');
  const top = positiveInteger('--top', values.top) ?? 10;
  const provider = oneOf('--provider', values.provider, providers) ?? 'openai';
  const loaded = await readInput(file, values, io);
  const report = inspectConversation(loaded.conversation, {
    accountant: createTokenAccountant({ provider }),
    top,
  });
  if (values.json) {
    io.stdout(
      `${JSON.stringify({ file, format: loaded.format, metadata: loaded.metadata, stats: loaded.stats, ...report }, null, 2)}\n`,
    );
  } else {
    io.stdout(`${render(file, loaded.format, report)}\n`);
  }
  return 0;
}

function render(file: string, format: string, report: InspectReport): string {
  const total = report.totalTokens;
  const content = report.contentTokens;
  const kinds = report.byPartKind;
  const right = (columns: number) =>
    ['left', ...Array.from({ length: columns - 1 }, () => 'right' as const)] as const;
  const out = [
    `${file}: ${report.messageCount} messages (${format}), ${formatInteger(total)} tokens (o200k_base)`,
    `reasoning ${formatPercent(kinds.reasoning, content)} of content, exact duplicates ${formatPercent(report.duplicateTokens, content)} ` +
      `(${formatInteger(report.duplicateTokens)} tokens), framing ${formatInteger(report.framingTokens)}, tool schemas ${formatInteger(report.toolSchemaTokens)}`,
    '',
    'By role',
    formatTable(
      ['role', 'messages', 'tokens', 'share'],
      Object.entries(report.byRole).map(([role, entry]) => [
        role,
        formatInteger(entry.messages),
        formatInteger(entry.tokens),
        formatPercent(entry.tokens, total),
      ]),
      [...right(4)],
    ),
    '',
    'By kind of content',
    formatTable(
      ['kind', 'tokens', 'share of content'],
      [
        ['text', kinds.text],
        ['reasoning', kinds.reasoning],
        ['tool calls', kinds.toolCall],
        ['tool results', kinds.toolResult],
        ['images and files (estimated)', kinds.other],
      ].map(([name, tokens]) => [
        String(name),
        formatInteger(Number(tokens)),
        formatPercent(Number(tokens), content),
      ]),
      [...right(3)],
    ),
  ];
  if (report.byTool.length > 0) {
    out.push(
      '',
      'By tool',
      formatTable(
        ['tool', 'calls', 'results', 'errors', 'tokens', 'share', 'largest result'],
        report.byTool.map((tool) => [
          tool.toolName,
          formatInteger(tool.callCount),
          formatInteger(tool.resultCount),
          formatInteger(tool.errorCount),
          formatInteger(tool.totalTokens),
          formatPercent(tool.totalTokens, total),
          formatInteger(tool.largestResultTokens),
        ]),
        [...right(7)],
      ),
    );
  }
  if (report.largestToolOutputs.length > 0) {
    out.push(
      '',
      'Largest tool outputs',
      formatTable(
        ['#', 'tool', 'tokens', 'share', 'output'],
        report.largestToolOutputs.map((output) => [
          String(output.index),
          output.toolName + (output.isError ? ' (error)' : ''),
          formatInteger(output.tokens),
          formatPercent(output.tokens, total),
          output.preview.slice(0, 60),
        ]),
        ['right', 'left', 'right', 'right', 'left'],
      ),
    );
  }
  out.push(
    '',
    'Largest messages',
    formatTable(
      ['#', 'role', 'tokens', 'share', 'preview'],
      report.largestMessages.map((message) => [
        String(message.index),
        message.role,
        formatInteger(message.tokens),
        formatPercent(message.tokens, total),
        message.preview.slice(0, 60),
      ]),
      ['right', 'left', 'right', 'right', 'left'],
    ),
  );
  return out.join('\n');
}
