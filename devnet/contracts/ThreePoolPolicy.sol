// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ReserveBoundedPolicy} from "./ReserveBoundedPolicy.sol";

/// @title ThreePoolPolicy
/// @notice Fixed-plus-float settlement. Each day the NAV is first credited a fixed base return
///         (annualBaseBps / 365 of the NAV assets). Profit above the base is split three ways:
///         holders (dividends), reserve and NAV. A day below the base (or a loss) is topped up from
///         the reserve down to its floor; reserve above the cap flows into the NAV.
contract ThreePoolPolicy is ReserveBoundedPolicy {
    uint16 public immutable annualBaseBps;
    uint16 public immutable profitToHolderBps;
    uint16 public immutable profitToReserveBps;
    uint16 public immutable profitToNavBps;

    constructor(
        uint16 annualBaseBps_,
        uint16 profitToHolderBps_,
        uint16 profitToReserveBps_,
        uint16 profitToNavBps_,
        uint16 reserveTargetMaxBps_,
        uint16 reserveTargetMinBps_
    ) ReserveBoundedPolicy(reserveTargetMinBps_, reserveTargetMaxBps_) {
        if (uint256(profitToHolderBps_) + profitToReserveBps_ + profitToNavBps_ != BPS) revert InvalidParams();
        if (annualBaseBps_ > BPS) revert InvalidParams();
        annualBaseBps = annualBaseBps_;
        profitToHolderBps = profitToHolderBps_;
        profitToReserveBps = profitToReserveBps_;
        profitToNavBps = profitToNavBps_;
    }

    function kind() external pure returns (string memory) {
        return "fixed-plus-float";
    }

    function params()
        external
        view
        returns (
            uint16 annualBaseBps_,
            uint16 profitToHolderBps_,
            uint16 profitToReserveBps_,
            uint16 profitToNavBps_,
            uint16 reserveTargetMaxBps_,
            uint16 reserveTargetMinBps_
        )
    {
        return (
            annualBaseBps,
            profitToHolderBps,
            profitToReserveBps,
            profitToNavBps,
            reserveTargetMaxBps(),
            reserveTargetMinBps()
        );
    }

    /// @notice The fixed daily base credited to the NAV for `navAssets`.
    function dailyBase(uint256 navAssets) public view returns (uint256) {
        return (navAssets * annualBaseBps) / BPS / 365;
    }

    function split(
        int256 pnl,
        uint256 navAssets,
        uint256 reserve
    ) external view returns (uint256 toHolders, int256 reserveDelta, int256 navDelta) {
        uint256 base = dailyBase(navAssets);
        if (pnl < int256(base)) {
            uint256 drawn = _drawFromReserve(uint256(int256(base) - pnl), navAssets, reserve);
            return (0, -int256(drawn), pnl + int256(drawn));
        }
        uint256 excess = uint256(pnl) - base;
        toHolders = (excess * profitToHolderBps) / BPS;
        uint256 toReserve = (excess * profitToReserveBps) / BPS;
        reserveDelta = _cappedReserveDelta(toReserve, navAssets, reserve);
        navDelta = pnl - int256(toHolders) - reserveDelta;
    }
}
