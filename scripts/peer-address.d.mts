export declare const PEER_ADDRESS_HEADER: "x-aas-peer-address";
