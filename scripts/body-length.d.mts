export declare const BODY_LENGTH_HEADER: "x-aas-body-length";
