export declare function readSecretsFile(file: string): Record<string, string>;
export declare function writeSecretsFile(file: string, secrets: Record<string, string>): void;
