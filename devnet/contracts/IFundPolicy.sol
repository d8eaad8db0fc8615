// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title IFundPolicy
/// @notice A settlement policy decides how one day's strategy P&L is split between the holders
///         (paid out as dividends), the fund's reserve and the NAV. Both policies implement it.
interface IFundPolicy {
    /// @return "fixed-plus-float" or "fractional-kelly"
    function kind() external view returns (string memory);

    /// @notice Reserve floor, in bps of the NAV assets.
    function reserveTargetMinBps() external view returns (uint16);

    /// @notice Reserve cap, in bps of the NAV assets.
    function reserveTargetMaxBps() external view returns (uint16);

    /// @notice Splits one epoch's P&L. Invariant: int256(toHolders) + reserveDelta + navDelta == pnl.
    /// @param pnl realised strategy P&L of the epoch in base-asset units (negative for a loss)
    /// @param navAssets assets backing the shares before the P&L
    /// @param reserve reserve balance before the P&L
    function split(
        int256 pnl,
        uint256 navAssets,
        uint256 reserve
    ) external view returns (uint256 toHolders, int256 reserveDelta, int256 navDelta);
}
