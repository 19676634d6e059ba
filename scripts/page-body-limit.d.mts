export declare const PAGE_BODY_LIMIT_BYTES: number;
