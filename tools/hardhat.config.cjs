// Hardhat 2 configuration of Flock's local development chain (see runtime/payments/local/chain.ts; here beside tools/node_modules, since Hardhat runs only as a local installation): chain id 31337, automining,
// the default test mnemonic's accounts. Only the built-in `hardhat` network is used.
module.exports = {
  solidity: "0.8.26",
  networks: {
    hardhat: {
      chainId: 31337,
      hardfork: "cancun",
      mining: { auto: true },
      accounts: { count: 5 },
      loggingEnabled: false,
    },
  },
};
