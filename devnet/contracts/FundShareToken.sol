// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title FundShareToken
/// @notice The share token of one fund (6 decimals, like the base asset). Only the fund's vault,
///         which deploys it, mints, burns and escrows shares during redemption requests.
contract FundShareToken is ERC20 {
    error OnlyVault(address caller);

    address public immutable vault;

    constructor(string memory name_, string memory symbol_) ERC20(name_, symbol_) {
        vault = msg.sender;
    }

    modifier onlyVault() {
        if (msg.sender != vault) revert OnlyVault(msg.sender);
        _;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external onlyVault {
        _mint(to, amount);
    }

    function burn(address from, uint256 amount) external onlyVault {
        _burn(from, amount);
    }

    /// @notice Moves shares from a holder into the vault's escrow when the holder requests a
    ///         redemption, so that no allowance round-trip is needed.
    function escrow(address from, uint256 amount) external onlyVault {
        _transfer(from, vault, amount);
    }
}
