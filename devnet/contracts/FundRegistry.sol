// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {FundVault} from "./FundVault.sol";

/// @title FundRegistry
/// @notice The protocol's list of funds. Registering a vault announces it (FundRegistered), which is
///         how indexers discover each fund's vault, share token and policy.
contract FundRegistry is Ownable {
    event FundRegistered(address indexed vault, address indexed shareToken, address indexed policy, string slug);

    error SlugTaken(string slug);
    error AlreadyRegistered(address vault);
    error EmptySlug();

    address[] private _funds;
    mapping(address vault => bool) public isRegistered;
    mapping(string slug => address vault) public vaultOf;

    constructor(address owner_) Ownable(owner_) {}

    function register(FundVault vault, string calldata slug) external onlyOwner {
        if (bytes(slug).length == 0) revert EmptySlug();
        if (vaultOf[slug] != address(0)) revert SlugTaken(slug);
        if (isRegistered[address(vault)]) revert AlreadyRegistered(address(vault));
        isRegistered[address(vault)] = true;
        vaultOf[slug] = address(vault);
        _funds.push(address(vault));
        emit FundRegistered(address(vault), address(vault.shareToken()), address(vault.policy()), slug);
    }

    function funds() external view returns (address[] memory) {
        return _funds;
    }
}
