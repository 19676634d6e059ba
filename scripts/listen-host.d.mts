export function isLoopbackHost(host: string): boolean;
export function defaultListenHost(baseUrl: string): string | undefined;
