export {
  assistantMessage,
  type ConversationBuilder,
  createConversationBuilder,
  systemMessage,
  type ToolExchange,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from './message-builders.js';
export {
  createScriptedLlmClient,
  type ScriptedLlmClient,
  type ScriptedLlmClientOptions,
  type ScriptedStep,
} from './scripted-llm-client.js';
