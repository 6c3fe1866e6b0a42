/**
 * The tool name a converter gives a tool result whose call it cannot find (OpenAI tool messages and Anthropic
 * tool_result blocks carry only the call id). Real tool names cannot contain spaces or parentheses, so it
 * never collides with one.
 */
export const unknownToolName = '(unknown tool)';
