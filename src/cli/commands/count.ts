import { PrecisError } from '../../errors/index.js';
import { messageText, toolCallsOf } from '../../messages/content.js';
import { type Provider, providers } from '../../messages/provider.js';
import type { Conversation } from '../../messages/types.js';
import {
  type ConversationTokenCount,
  createTokenAccountant,
  getModelInfo,
  type ResolvedModel,
  resolveModel,
} from '../../tokens/index.js';
import type { CliIo } from '../cli-io.js';
import { formatInteger, formatPercent, formatTable, preview } from '../format-table.js';
import { oneOf, parseOptions, positiveInteger } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';

/** `precis count <file>`: exact o200k tokens, where they go, and how much of a model's window they fill. */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    provider: { type: 'string' },
    model: { type: 'string' },
    'context-window': { type: 'string' },
    top: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0)
    throw new PrecisError('invalid-argument', 'count takes exactly one input file');
  const top = positiveInteger('--top', values.top) ?? 10;
  const contextWindow = positiveInteger('--context-window', values['context-window']);

  const loaded = await readInput(file, values, io);
  const { conversation } = loaded;
  // A model the transcript recorded is used only when the registry knows it; an explicit --model must be known.
  const recorded = conversation.model ?? loaded.metadata.model;
  const modelName = values.model ?? (recorded !== undefined && getModelInfo(recorded) ? recorded : undefined);
  const model =
    modelName === undefined && contextWindow === undefined
      ? undefined
      : resolveModel({
          ...(modelName === undefined ? {} : { model: modelName }),
          ...(contextWindow === undefined ? {} : { contextWindow }),
        });
  const provider = chooseProvider(oneOf('--provider', values.provider, providers), model, loaded.format);
  const count = createTokenAccountant({ provider }).countConversation(conversation);

  const context: CountContext = {
    file,
    format: loaded.format,
    provider,
    modelName,
    model,
    count,
    conversation,
    top,
  };
  io.stdout(values.json ? `${JSON.stringify(toJson(context), null, 2)}\n` : `${renderReport(context)}\n`);
  return 0;
}

interface CountContext {
  file: string;
  format: string;
  provider: Provider;
  modelName: string | undefined;
  model: ResolvedModel | undefined;
  count: ConversationTokenCount;
  conversation: Conversation;
  top: number;
}

/** Framing follows the explicit flag, then the model's provider, then the file's format, then OpenAI. */
function chooseProvider(
  flag: Provider | undefined,
  model: ResolvedModel | undefined,
  format: string,
): Provider {
  if (flag !== undefined) return flag;
  if (model?.provider === 'openai' || model?.provider === 'anthropic') return model.provider;
  return format === 'anthropic' ? 'anthropic' : 'openai';
}

function largest(count: ConversationTokenCount, top: number) {
  return [...count.messages].sort((a, b) => b.totalTokens - a.totalTokens || a.index - b.index).slice(0, top);
}

function describeMessage(conversation: Conversation, index: number): string {
  const message = conversation.messages[index]!;
  const calls = toolCallsOf(message);
  if (message.role === 'tool')
    return `[${message.content.map((part) => ('toolName' in part ? part.toolName : part.type)).join(', ')}] ${messageText(message)}`;
  if (calls.length > 0) return `→ ${calls.map((call) => call.toolName).join(', ')} ${messageText(message)}`;
  return messageText(message);
}

function toJson(context: CountContext) {
  const { file, format, provider, modelName, model, count, conversation, top } = context;
  return {
    file,
    format,
    encoding: 'o200k_base',
    framing: provider,
    messageCount: conversation.messages.length,
    totalTokens: count.totalTokens,
    contentTokens: count.contentTokens,
    framingTokens: count.framingTokens,
    systemTokens: count.systemTokens,
    toolSchemaTokens: count.toolSchemaTokens,
    replyPrimingTokens: count.replyPrimingTokens,
    byRole: count.byRole,
    byTool: count.byTool,
    largestMessages: largest(count, top).map((entry) => ({
      ...entry,
      preview: preview(describeMessage(conversation, entry.index)),
    })),
    ...(model === undefined ? {} : { window: windowUsage(modelName, model, count.totalTokens) }),
  };
}

function windowUsage(modelName: string | undefined, model: ResolvedModel, totalTokens: number) {
  const usable = model.contextWindow - model.outputReserve;
  return {
    model: modelName ?? null,
    contextWindow: model.contextWindow,
    outputReserve: model.outputReserve,
    usableTokens: usable,
    usedShare: totalTokens / usable,
  };
}

function renderReport(context: CountContext): string {
  const { file, format, provider, modelName, model, count, conversation, top } = context;
  const total = count.totalTokens;
  const out: string[] = [
    `${file}: ${conversation.messages.length} messages (${format})`,
    `${formatInteger(total)} tokens (o200k_base, ${provider} framing)`,
    formatTable(
      ['part', 'tokens', 'share'],
      [
        [
          'content (exact o200k)',
          formatInteger(count.contentTokens),
          formatPercent(count.contentTokens, total),
        ],
        ['message framing', formatInteger(count.framingTokens), formatPercent(count.framingTokens, total)],
        ['tool schemas', formatInteger(count.toolSchemaTokens), formatPercent(count.toolSchemaTokens, total)],
        [
          'reply priming',
          formatInteger(count.replyPrimingTokens),
          formatPercent(count.replyPrimingTokens, total),
        ],
      ],
      ['left', 'right', 'right'],
    ),
  ];
  if (model !== undefined) {
    const usage = windowUsage(modelName, model, total);
    out.push(
      `${modelName ?? 'context'}: ${formatPercent(total, usage.usableTokens)} of ${formatInteger(usage.usableTokens)} usable tokens ` +
        `(${formatInteger(model.contextWindow)} window - ${formatInteger(model.outputReserve)} output reserve)`,
    );
  }
  const roleCounts = new Map<string, number>();
  for (const message of conversation.messages)
    roleCounts.set(message.role, (roleCounts.get(message.role) ?? 0) + 1);
  out.push(
    '',
    'By role',
    formatTable(
      ['role', 'messages', 'tokens', 'share'],
      Object.entries(count.byRole)
        .filter(([role]) => roleCounts.has(role))
        .map(([role, tokens]) => [
          role,
          formatInteger(roleCounts.get(role) ?? 0),
          formatInteger(tokens),
          formatPercent(tokens, total),
        ]),
      ['left', 'right', 'right', 'right'],
    ),
  );
  const tools = Object.entries(count.byTool).sort((a, b) => b[1].totalTokens - a[1].totalTokens);
  if (tools.length > 0) {
    out.push(
      '',
      'By tool',
      formatTable(
        ['tool', 'calls', 'results', 'tokens', 'share'],
        tools.map(([name, tool]) => [
          name,
          formatInteger(tool.callCount),
          formatInteger(tool.resultCount),
          formatInteger(tool.totalTokens),
          formatPercent(tool.totalTokens, total),
        ]),
        ['left', 'right', 'right', 'right', 'right'],
      ),
    );
  }
  out.push(
    '',
    `Largest messages (top ${Math.min(top, count.messages.length)})`,
    formatTable(
      ['#', 'role', 'tokens', 'share', 'preview'],
      largest(count, top).map((entry) => [
        String(entry.index),
        entry.role,
        formatInteger(entry.totalTokens),
        formatPercent(entry.totalTokens, total),
        preview(describeMessage(conversation, entry.index)),
      ]),
      ['right', 'left', 'right', 'right', 'left'],
    ),
  );
  return out.join('\n');
}
