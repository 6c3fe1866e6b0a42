/** The wire formats precis converts to and validates for. */
export const providers = ['openai', 'anthropic'] as const;
export type Provider = (typeof providers)[number];
