// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title MockUSDC
/// @notice The devnet's base asset: a 6-decimal ERC20 standing in for USDC. Minting is open
///         (a faucet) because on a local chain every participant must be able to fund itself.
contract MockUSDC is ERC20 {
    constructor() ERC20("Mock USD Coin", "USDC") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Faucet: mints `amount` to `to`. Devnet only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }
}
