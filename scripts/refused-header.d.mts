export declare const REFUSED_HEADER: "x-aas-refused";
export declare const REFUSED_PATH: "/v1/refused";
